//! Result tables as Arrow record batches, exported through the Arrow PyCapsule interface
//! (`__arrow_c_array__`), so `pyarrow.record_batch(table)` imports them without copying.

use std::sync::Arc;

use arrow_array::ffi::to_ffi;
use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch, StringArray, StructArray, UInt64Array};
use arrow_schema::{Field, Schema};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use dsim_core::results::{Column, Table};

#[pyclass(module = "dsim._dsim", frozen)]
pub struct ArrowTable {
    batch: RecordBatch,
}

impl ArrowTable {
    pub fn from_table(t: &Table) -> Result<Self, String> {
        let mut fields = Vec::with_capacity(t.columns.len());
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(t.columns.len());
        for (name, col) in &t.columns {
            let array: ArrayRef = match col {
                Column::U64(v) => Arc::new(UInt64Array::from(v.clone())),
                Column::F64(v) => Arc::new(Float64Array::from(v.clone())),
                Column::Str(v) => Arc::new(StringArray::from(v.clone())),
            };
            fields.push(Field::new(name, array.data_type().clone(), false));
            arrays.push(array);
        }
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).map_err(|e| e.to_string())?;
        Ok(ArrowTable { batch })
    }
}

#[pymethods]
impl ArrowTable {
    /// Arrow PyCapsule interface: (schema capsule, array capsule) of a struct array.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema; // the schema is fixed; pyarrow casts if it wants another
        let data = StructArray::from(self.batch.clone()).into_data();
        let (array, schema) = to_ffi(&data).map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        let schema = PyCapsule::new_with_value(py, schema, c"arrow_schema")?;
        let array = PyCapsule::new_with_value(py, array, c"arrow_array")?;
        Ok((schema, array))
    }

    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }
}
