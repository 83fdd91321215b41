//! The daemon protocol decoders.
//!
//! Properties: decode_request and decode_reply never panic on any bytes;
//! whatever decodes re-encodes to exactly the same frame body (the format
//! has one encoding per value) and decodes back to the same value; and
//! read_frame over the length-prefixed bytes agrees with the body decoder.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = proto::decode_request(data) {
        let mut out = Vec::new();
        proto::encode_request(&r, &mut out);
        assert_eq!(&out[4..], data, "request re-encodes to other bytes: {r:?}");
        let again = proto::read_request(&mut &out[..], out.len()).expect("re-encoded request reads back");
        assert_eq!(again, r);
    }
    if let Ok(r) = proto::decode_reply(data) {
        let mut out = Vec::new();
        proto::encode_reply(&r, &mut out);
        assert_eq!(&out[4..], data, "reply re-encodes to other bytes: {r:?}");
        let again = proto::read_reply(&mut &out[..], out.len()).expect("re-encoded reply reads back");
        assert_eq!(again, r);
    }
    // The same bytes as a stream of frames under a small limit: every
    // outcome is an error or a frame, never a panic or an over-read.
    let mut rd = data;
    let mut buf = Vec::new();
    while proto::read_frame(&mut rd, 1 << 16, &mut buf).is_ok() {
        assert!(buf.len() <= 1 << 16);
        let _ = proto::decode_request(&buf);
        let _ = proto::decode_reply(&buf);
    }
});
