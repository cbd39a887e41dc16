//! Typed value buffers: numbers keep the type the file stored them in, so that a conversion
//! between two formats that both hold Int16 never passes through a float, and float32 data is
//! never widened and narrowed on the way.

/// The storage type of an item's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataType {
    /// Unsigned 8-bit integer (GeoTIFF Byte).
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
}

impl DataType {
    /// Size of one value in bytes.
    pub fn size_bytes(self) -> usize {
        match self {
            Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::F64 => 8,
        }
    }

    /// True for F32 and F64.
    pub fn is_float(self) -> bool {
        matches!(self, Self::F32 | Self::F64)
    }

    /// A name as GDAL spells it (`Byte`, `Int16`, `UInt16`, `Int32`, `UInt32`, `Float32`,
    /// `Float64`), used in parameters and messages.
    pub fn gdal_name(self) -> &'static str {
        match self {
            Self::U8 => "Byte",
            Self::I16 => "Int16",
            Self::U16 => "UInt16",
            Self::I32 => "Int32",
            Self::U32 => "UInt32",
            Self::F32 => "Float32",
            Self::F64 => "Float64",
        }
    }

    /// Parses a GDAL-style name, case-insensitively.
    pub fn from_gdal_name(name: &str) -> Option<Self> {
        [
            Self::U8,
            Self::I16,
            Self::U16,
            Self::I32,
            Self::U32,
            Self::F32,
            Self::F64,
        ]
        .into_iter()
        .find(|data_type| data_type.gdal_name().eq_ignore_ascii_case(name))
    }
}

/// A buffer of values of one [`DataType`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Values {
    /// Unsigned 8-bit values.
    U8(Vec<u8>),
    /// Signed 16-bit values.
    I16(Vec<i16>),
    /// Unsigned 16-bit values.
    U16(Vec<u16>),
    /// Signed 32-bit values.
    I32(Vec<i32>),
    /// Unsigned 32-bit values.
    U32(Vec<u32>),
    /// 32-bit float values.
    F32(Vec<f32>),
    /// 64-bit float values.
    F64(Vec<f64>),
}

impl Values {
    /// An empty buffer of `data_type` with room for `capacity` values.
    pub fn with_capacity(data_type: DataType, capacity: usize) -> Self {
        match data_type {
            DataType::U8 => Self::U8(Vec::with_capacity(capacity)),
            DataType::I16 => Self::I16(Vec::with_capacity(capacity)),
            DataType::U16 => Self::U16(Vec::with_capacity(capacity)),
            DataType::I32 => Self::I32(Vec::with_capacity(capacity)),
            DataType::U32 => Self::U32(Vec::with_capacity(capacity)),
            DataType::F32 => Self::F32(Vec::with_capacity(capacity)),
            DataType::F64 => Self::F64(Vec::with_capacity(capacity)),
        }
    }

    /// The type of the values.
    pub fn data_type(&self) -> DataType {
        match self {
            Self::U8(_) => DataType::U8,
            Self::I16(_) => DataType::I16,
            Self::U16(_) => DataType::U16,
            Self::I32(_) => DataType::I32,
            Self::U32(_) => DataType::U32,
            Self::F32(_) => DataType::F32,
            Self::F64(_) => DataType::F64,
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Self::U8(v) => v.len(),
            Self::I16(v) => v.len(),
            Self::U16(v) => v.len(),
            Self::I32(v) => v.len(),
            Self::U32(v) => v.len(),
            Self::F32(v) => v.len(),
            Self::F64(v) => v.len(),
        }
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes all values, keeping the allocation (readers reuse one buffer per item).
    pub fn clear(&mut self) {
        match self {
            Self::U8(v) => v.clear(),
            Self::I16(v) => v.clear(),
            Self::U16(v) => v.clear(),
            Self::I32(v) => v.clear(),
            Self::U32(v) => v.clear(),
            Self::F32(v) => v.clear(),
            Self::F64(v) => v.clear(),
        }
    }

    /// The value at `index` widened to f64 (exact for every type here), or `None` past the end.
    pub fn get_f64(&self, index: usize) -> Option<f64> {
        match self {
            Self::U8(v) => v.get(index).map(|&x| f64::from(x)),
            Self::I16(v) => v.get(index).map(|&x| f64::from(x)),
            Self::U16(v) => v.get(index).map(|&x| f64::from(x)),
            Self::I32(v) => v.get(index).map(|&x| f64::from(x)),
            Self::U32(v) => v.get(index).map(|&x| f64::from(x)),
            Self::F32(v) => v.get(index).map(|&x| f64::from(x)),
            Self::F64(v) => v.get(index).copied(),
        }
    }

    /// All values widened to f64 (exact for every type here).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            Self::U8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Self::I16(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Self::U16(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Self::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Self::U32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Self::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Self::F64(v) => v.clone(),
        }
    }

    /// Appends the values of `other`, which must have the same type; returns false (and
    /// appends nothing) when the types differ.
    pub fn extend_from(&mut self, other: &Values) -> bool {
        match (self, other) {
            (Self::U8(a), Self::U8(b)) => a.extend_from_slice(b),
            (Self::I16(a), Self::I16(b)) => a.extend_from_slice(b),
            (Self::U16(a), Self::U16(b)) => a.extend_from_slice(b),
            (Self::I32(a), Self::I32(b)) => a.extend_from_slice(b),
            (Self::U32(a), Self::U32(b)) => a.extend_from_slice(b),
            (Self::F32(a), Self::F32(b)) => a.extend_from_slice(b),
            (Self::F64(a), Self::F64(b)) => a.extend_from_slice(b),
            _ => return false,
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gdal_names_round_trip_case_insensitively() {
        for data_type in [DataType::U8, DataType::I16, DataType::F64] {
            let name = data_type.gdal_name().to_ascii_uppercase();
            assert_eq!(DataType::from_gdal_name(&name), Some(data_type));
        }
        assert_eq!(DataType::from_gdal_name("Complex"), None);
    }

    #[test]
    fn extend_refuses_mixed_types() {
        let mut values = Values::F32(vec![1.0]);
        assert!(!values.extend_from(&Values::F64(vec![2.0])));
        assert!(values.extend_from(&Values::F32(vec![2.0])));
        assert_eq!(values.to_f64(), vec![1.0, 2.0]);
    }
}
