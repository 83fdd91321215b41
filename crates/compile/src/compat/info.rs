//! A `struct xt_*_info` being filled in: a zeroed buffer of the struct's
//! size rounded up to `XT_ALIGN`, written at the field offsets of the C
//! layout (host byte order unless a field says otherwise). Offsets are
//! given by each extension module next to the struct they describe.

use super::xt_align;

#[derive(Debug)]
pub struct Info(Vec<u8>);

impl Info {
    /// A zeroed struct of `size` bytes (sizeof, before alignment).
    pub fn new(size: usize) -> Info {
        Info(vec![0; xt_align(size)])
    }

    pub fn u8(&mut self, off: usize, v: u8) -> &mut Self {
        self.0[off] = v;
        self
    }

    pub fn u16(&mut self, off: usize, v: u16) -> &mut Self {
        self.bytes(off, &v.to_ne_bytes())
    }

    pub fn u32(&mut self, off: usize, v: u32) -> &mut Self {
        self.bytes(off, &v.to_ne_bytes())
    }

    pub fn u64(&mut self, off: usize, v: u64) -> &mut Self {
        self.bytes(off, &v.to_ne_bytes())
    }

    /// A `__be16` field.
    pub fn be16(&mut self, off: usize, v: u16) -> &mut Self {
        self.bytes(off, &v.to_be_bytes())
    }

    /// A `__be32` field.
    pub fn be32(&mut self, off: usize, v: u32) -> &mut Self {
        self.bytes(off, &v.to_be_bytes())
    }

    pub fn bytes(&mut self, off: usize, b: &[u8]) -> &mut Self {
        self.0[off..off + b.len()].copy_from_slice(b);
        self
    }

    /// A `char name[cap]` field: the string's input bytes (non-UTF-8 input
    /// bytes as they came, see `iptables::bytes`) and NUL padding. The
    /// caller's value is at most `cap - 1` bytes (the syntax layer cuts it).
    pub fn str(&mut self, off: usize, s: &str, cap: usize) -> &mut Self {
        let raw = iptables::bytes::encode(s);
        let n = raw.len().min(cap - 1);
        self.bytes(off, &raw[..n])
    }

    pub fn into_vec(self) -> Vec<u8> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::Info;

    #[test]
    fn fields_land_at_their_offsets() {
        let mut i = Info::new(13);
        i.u8(0, 1)
            .u16(2, 0x0302)
            .be16(4, 0x0405)
            .u32(8, 0x0b0a_0908);
        let mut want = vec![1, 0, 0x02, 0x03, 0x04, 0x05, 0, 0];
        want.extend(0x0b0a_0908u32.to_ne_bytes());
        want.extend([0; 4]);
        if cfg!(target_endian = "big") {
            want[2..4].reverse();
        }
        assert_eq!(i.into_vec(), want);
        let mut s = Info::new(4);
        s.str(0, "abcdef", 4);
        assert_eq!(s.into_vec(), b"abc\0\0\0\0\0");
    }
}
