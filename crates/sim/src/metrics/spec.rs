//! Table specs, and the `table!` declaration that makes a table's row, buffers and spec from one
//! list of columns. The lists are data (`tables/<name>.toml`); build.rs writes each as a
//! `table!` declaration into `$OUT_DIR/metrics_tables.rs`, included at the end of this file.

use super::column::{Dtype, Elem, Table};

/// A column as documented and exported.
#[derive(Clone, Copy, Debug)]
pub struct ColumnSpec {
    pub name: &'static str,
    pub dtype: Dtype,
    /// Unit ("" for counts, codes and flags).
    pub unit: &'static str,
    pub description: &'static str,
}

/// A table as documented and exported. Columns named `*_code` index the `labels` list of the
/// same stem (`phase_code` → `labels.phase`): categoricals without per-row strings.
#[derive(Clone, Copy, Debug)]
pub struct TableSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub columns: &'static [ColumnSpec],
}

/// Declares a table: `$Row` (one row), `$Cols` (columnar buffers with `push(row)` and
/// `table()`), and `$SPEC` (its [`TableSpec`]), from one list of `name: type, "unit", "meaning";`.
macro_rules! table {
    ($SPEC:ident, $Row:ident, $Cols:ident, $name:literal, $desc:literal {
        $($field:ident: $ty:ty, $unit:literal, $fdesc:literal;)*
    }) => {
        /// One row of the table (see its spec for the columns).
        #[derive(Clone, Debug)]
        pub struct $Row {
            $(#[doc = $fdesc] pub $field: $ty),*
        }

        /// The table's columnar buffers.
        #[derive(Clone, Debug, Default)]
        pub struct $Cols {
            $(pub $field: Vec<$ty>),*
        }

        impl $Cols {
            pub fn push(&mut self, r: $Row) {
                $(self.$field.push(r.$field);)*
            }
            pub fn reserve(&mut self, n: usize) {
                $(self.$field.reserve(n);)*
            }
            pub fn len(&self) -> usize {
                [$(self.$field.len()),*][0]
            }
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
            pub fn table(&self) -> Table {
                let mut t = Table::default();
                $(t.push(stringify!($field), <$ty as Elem>::column(self.$field.clone()));)*
                t
            }
        }

        pub static $SPEC: TableSpec = TableSpec {
            name: $name,
            description: $desc,
            columns: &[$(ColumnSpec { name: stringify!($field), dtype: <$ty as Elem>::DTYPE, unit: $unit, description: $fdesc }),*],
        };
    };
}

include!(concat!(env!("OUT_DIR"), "/metrics_tables.rs"));
