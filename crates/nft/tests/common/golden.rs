//! Byte goldens: netlink bytes rendered as annotated rows, so a golden
//! reads as the message's attributes.

use nft::netlink::NLA_F_NESTED;
use nft::{Batch, Object};

/// Renders netlink messages as rows: the header fields, then one row per
/// attribute (`len type[N] payload-hex`), nests indented. Parses the bytes
/// positionally, independently of the crate's parser.
pub fn render(bytes: &[u8]) -> String {
    fn attrs(out: &mut String, b: &[u8], depth: usize) {
        let mut i = 0;
        while i + 4 <= b.len() {
            let len = u16::from_ne_bytes([b[i], b[i + 1]]) as usize;
            let ty = u16::from_ne_bytes([b[i + 2], b[i + 3]]);
            let body = &b[i + 4..i + len];
            let pad = "  ".repeat(depth);
            if ty & NLA_F_NESTED != 0 {
                out.push_str(&format!("{pad}{len:3} nest {}\n", ty & 0x3fff));
                attrs(out, body, depth + 1);
            } else {
                let hex: Vec<String> = body.iter().map(|x| format!("{x:02x}")).collect();
                out.push_str(&format!("{pad}{len:3} {:4} {}\n", ty, hex.join(" ")));
            }
            i += (len + 3) & !3;
        }
    }
    let mut out = String::new();
    let mut i = 0;
    while i + 20 <= bytes.len() {
        let len = u32::from_ne_bytes(bytes[i..i + 4].try_into().unwrap()) as usize;
        let ty = u16::from_ne_bytes([bytes[i + 4], bytes[i + 5]]);
        let flags = u16::from_ne_bytes([bytes[i + 6], bytes[i + 7]]);
        let seq = u32::from_ne_bytes(bytes[i + 8..i + 12].try_into().unwrap());
        let g = &bytes[i + 16..i + 20];
        out.push_str(&format!(
            "msg len={len} type={ty:#06x} flags={flags:#06x} seq={seq} family={} res_id={:02x}{:02x}\n",
            g[0], g[2], g[3]
        ));
        attrs(&mut out, &bytes[i + 20..i + len], 1);
        i += len;
    }
    out
}

/// Emits `obj` as a single message (type `NEW*`, flags REQUEST|CREATE, seq 1).
pub fn one<O: Object>(obj: &O) -> Vec<u8> {
    let mut b = Batch::new(0, None);
    b.add(obj, 0);
    let bytes = b.finish();
    let first = u32::from_ne_bytes(bytes[0..4].try_into().unwrap()) as usize;
    let len = u32::from_ne_bytes(bytes[first..first + 4].try_into().unwrap()) as usize;
    bytes[first..first + len].to_vec()
}

pub fn golden(got: &[u8], want: &str) {
    let got = render(got);
    let want: String = want
        .lines()
        .map(str::trim_start)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{}\n", l.strip_prefix('|').unwrap_or(l)))
        .collect();
    assert_eq!(got, want, "\n--- got ---\n{got}--- want ---\n{want}");
}
