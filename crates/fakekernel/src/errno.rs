//! Linux errno values the fake kernel answers with (positive; netlink
//! carries them negated).

pub const ENOENT: i32 = 2;
pub const E2BIG: i32 = 7;
pub const EBUSY: i32 = 16;
pub const EEXIST: i32 = 17;
pub const EINVAL: i32 = 22;
pub const ENFILE: i32 = 23;
pub const EMLINK: i32 = 31;
pub const ERANGE: i32 = 34;
pub const ERESTART: i32 = 85;
pub const EMSGSIZE: i32 = 90;
pub const EOPNOTSUPP: i32 = 95;
pub const EAFNOSUPPORT: i32 = 97;
pub const ENOBUFS: i32 = 105;
