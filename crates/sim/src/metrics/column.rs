//! A table's columns as a run returns them: element types and the columnar [`Table`].

/// A column's element type (numpy dtype on the Python side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    F64,
    I64,
    I32,
    U16,
    U8,
}

impl Dtype {
    /// numpy's dtype string.
    pub fn numpy(self) -> &'static str {
        match self {
            Dtype::F64 => "<f8",
            Dtype::I64 => "<i8",
            Dtype::I32 => "<i4",
            Dtype::U16 => "<u2",
            Dtype::U8 => "|u1",
        }
    }
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    U16(Vec<u16>),
    U8(Vec<u8>),
}

/// Rust element types a column can hold.
pub trait Elem: Copy {
    const DTYPE: Dtype;
    fn column(v: Vec<Self>) -> Column;
}

macro_rules! elem {
    ($($t:ty => $d:ident),*) => {
        $(impl Elem for $t {
            const DTYPE: Dtype = Dtype::$d;
            fn column(v: Vec<Self>) -> Column {
                Column::$d(v)
            }
        })*
    };
}
elem!(f64 => F64, i64 => I64, i32 => I32, u16 => U16, u8 => U8);

impl Column {
    /// numpy dtype string and little-endian bytes.
    pub fn to_le_bytes(&self) -> (&'static str, Vec<u8>) {
        match self {
            Column::F64(v) => {
                (Dtype::F64.numpy(), v.iter().flat_map(|x| x.to_le_bytes()).collect())
            }
            Column::I64(v) => {
                (Dtype::I64.numpy(), v.iter().flat_map(|x| x.to_le_bytes()).collect())
            }
            Column::I32(v) => {
                (Dtype::I32.numpy(), v.iter().flat_map(|x| x.to_le_bytes()).collect())
            }
            Column::U16(v) => {
                (Dtype::U16.numpy(), v.iter().flat_map(|x| x.to_le_bytes()).collect())
            }
            Column::U8(v) => (Dtype::U8.numpy(), v.clone()),
        }
    }
    pub fn dtype(&self) -> Dtype {
        match self {
            Column::F64(_) => Dtype::F64,
            Column::I64(_) => Dtype::I64,
            Column::I32(_) => Dtype::I32,
            Column::U16(_) => Dtype::U16,
            Column::U8(_) => Dtype::U8,
        }
    }
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::I32(v) => v.len(),
            Column::U16(v) => v.len(),
            Column::U8(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn as_f64(&self) -> Option<&[f64]> {
        if let Column::F64(v) = self {
            Some(v)
        } else {
            None
        }
    }
    pub fn as_i64(&self) -> Option<&[i64]> {
        if let Column::I64(v) = self {
            Some(v)
        } else {
            None
        }
    }
    /// A `*_code` column's label indices, whatever its width.
    pub fn as_codes(&self) -> Option<Vec<usize>> {
        match self {
            Column::U8(v) => Some(v.iter().map(|&c| c as usize).collect()),
            Column::U16(v) => Some(v.iter().map(|&c| c as usize).collect()),
            _ => None,
        }
    }
}

/// Named columns of equal length.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &'static str, c: Column) {
        self.columns.push((name, c));
    }
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }
}
