//! Protocol buffer writing for Mapbox Vector Tile 2.1, by hand: the format uses five message
//! types and three wire types, which is less code than a protobuf dependency and its build
//! step.

/// Wire type of varints.
const VARINT: u32 = 0;
/// Wire type of 64-bit values.
const FIXED64: u32 = 1;
/// Wire type of length-delimited values.
const BYTES: u32 = 2;
/// Wire type of 32-bit values.
#[cfg(test)]
const FIXED32: u32 = 5;

/// Appends `value` as a varint.
pub(crate) fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Zigzag encoding of a signed integer (MVT parameter integers, sint64).
pub(crate) fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn key(out: &mut Vec<u8>, field: u32, wire: u32) {
    varint(out, u64::from((field << 3) | wire));
}

/// Field `field` as a varint.
pub(crate) fn uint_field(out: &mut Vec<u8>, field: u32, value: u64) {
    key(out, field, VARINT);
    varint(out, value);
}

/// Field `field` as length-delimited bytes.
pub(crate) fn bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    key(out, field, BYTES);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Field `field` as packed varints.
pub(crate) fn packed_field(out: &mut Vec<u8>, field: u32, values: &[u32]) {
    if values.is_empty() {
        return;
    }
    let mut packed = Vec::with_capacity(values.len() * 2);
    for &value in values {
        varint(&mut packed, u64::from(value));
    }
    bytes_field(out, field, &packed);
}

/// Field `field` as a double.
pub(crate) fn double_field(out: &mut Vec<u8>, field: u32, value: f64) {
    key(out, field, FIXED64);
    out.extend_from_slice(&value.to_le_bytes());
}

/// Field `field` as a float.
#[cfg(test)]
pub(crate) fn float_field(out: &mut Vec<u8>, field: u32, value: f32) {
    key(out, field, FIXED32);
    out.extend_from_slice(&value.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_zigzag_follow_the_protobuf_rules() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
        assert_eq!(zigzag(-2), 3);
        assert_eq!(zigzag(i64::from(i32::MAX)), 4_294_967_294);
        let mut out = Vec::new();
        uint_field(&mut out, 15, 2);
        assert_eq!(out, [0x78, 0x02]);
        let mut out = Vec::new();
        float_field(&mut out, 2, 1.0);
        assert_eq!(out, [0x15, 0, 0, 0x80, 0x3f]);
    }
}
