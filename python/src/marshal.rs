//! The per-call path of `Program.__call__` for the common case: torch tensors (or numpy
//! arrays) on the host, contiguous, of exactly the dtypes and shapes the program takes.
//! Reading them and allocating the outputs here, in Rust, costs a few attribute reads
//! per tensor instead of the Python code of `tpuc/_tensors.py` (which stays the general
//! path: other devices, strided or conjugated tensors, mixed inputs, and every error
//! message). Anything unexpected here answers `None`, never an error, and the Python
//! path takes over.
//!
//! numpy and torch are looked up once (torch only once something imported it); the
//! dtype tables come from `tpuc._tensors`, their one home.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::{intern, IntoPyObjectExt};
use tpuc_runtime::DType;

/// One library's array types, allocator and dtype objects.
struct Library {
    /// numpy.ndarray; torch.Tensor and torch.nn.Parameter. Only these exact types:
    /// subclasses (masked arrays, tensor wrappers such as DTensor) take the Python path.
    array_types: Vec<Py<PyType>>,
    /// `numpy.empty(shape, dtype)` / `torch.empty(*shape, dtype=..., device="cpu")`.
    empty: Py<PyAny>,
    dtypes: Vec<(DType, Py<PyAny>)>,
    /// torch.device("cpu") (torch only): outputs are made on the host whatever
    /// torch.set_default_device (or a `with torch.device(...)` block) says, since the
    /// runtime writes host memory. A device object parses faster than the string.
    host: Option<Py<PyAny>>,
}

impl Library {
    fn owns(&self, py: Python<'_>, arg: &Bound<'_, PyAny>) -> bool {
        let t = arg.get_type();
        self.array_types.iter().any(|a| t.is(a.bind(py)))
    }

    fn dtype_object(&self, d: DType) -> Option<&Py<PyAny>> {
        self.dtypes.iter().find(|(x, _)| *x == d).map(|(_, o)| o)
    }

    /// `dtypes` from `tpuc._tensors.<table>` ({tpuc name: dtype object}), complex
    /// left out (torch's conjugate views need the Python path) and bf16 where the
    /// library has none.
    fn new(
        py: Python<'_>,
        module: &str,
        array_types: &[&str],
        table: &Bound<'_, PyDict>,
        wrap: impl Fn(&Bound<'_, PyAny>) -> PyResult<Py<PyAny>>,
    ) -> PyResult<Library> {
        let m = py.import(module)?;
        let mut dtypes = Vec::new();
        for (name, object) in table.iter() {
            let Some(d) = DType::parse(&name.extract::<String>()?) else {
                continue;
            };
            if !matches!(d, DType::C64 | DType::C128) {
                dtypes.push((d, wrap(&object)?));
            }
        }
        let array_types = array_types
            .iter()
            .map(|path| {
                let mut object = m.clone().into_any();
                for part in path.split('.') {
                    object = object.getattr(part)?;
                }
                Ok(object.cast_into::<PyType>()?.unbind())
            })
            .collect::<PyResult<_>>()?;
        Ok(Library {
            array_types,
            empty: m.getattr("empty")?.unbind(),
            dtypes,
            host: None,
        })
    }
}

static NUMPY: PyOnceLock<Option<Library>> = PyOnceLock::new();
static TORCH: PyOnceLock<Option<Library>> = PyOnceLock::new();

fn numpy(py: Python<'_>) -> Option<&'static Library> {
    NUMPY
        .get_or_init(py, || {
            let load = || -> PyResult<Library> {
                let table = py.import("tpuc._tensors")?.getattr("_NUMPY")?;
                let np = py.import("numpy")?;
                let lib = Library::new(py, "numpy", &["ndarray"], table.cast::<PyDict>()?, |t| {
                    Ok(np.getattr("dtype")?.call1((t,))?.unbind())
                })?;
                // The fields read below are numpy's stable ABI; check them once on an
                // array whose answers are known, else leave numpy to the Python path.
                let probe = np.getattr("empty")?.call1(((2, 3), "float32"))?;
                let address: usize = probe
                    .getattr("__array_interface__")?
                    .get_item("data")?
                    .get_item(0)?
                    .extract()?;
                match array_fields(&probe) {
                    Some((data, dims, strides))
                        if data == address && dims == [2, 3] && strides == [12, 4] =>
                    {
                        Ok(lib)
                    }
                    _ => Err(pyo3::exceptions::PyTypeError::new_err("unexpected layout")),
                }
            };
            load().ok()
        })
        .as_ref()
}

/// torch, once the caller's process imported it (never imported from here).
fn torch(py: Python<'_>) -> Option<&'static Library> {
    if let Some(t) = TORCH.get(py) {
        return t.as_ref();
    }
    let imported = py
        .import("sys")
        .and_then(|s| s.getattr("modules"))
        .and_then(|m| m.contains("torch"))
        .unwrap_or(false);
    if !imported {
        return None;
    }
    TORCH
        .get_or_init(py, || {
            let load = || -> PyResult<Library> {
                let torch = py.import("torch")?;
                let table = py
                    .import("tpuc._tensors")?
                    .getattr("_torch_dtypes")?
                    .call1((&torch,))?;
                let mut lib = Library::new(
                    py,
                    "torch",
                    &["Tensor", "nn.Parameter"],
                    table.cast::<PyDict>()?,
                    |t| Ok(t.clone().unbind()),
                )?;
                lib.host = Some(torch.getattr("device")?.call1(("cpu",))?.unbind());
                Ok(lib)
            };
            load().ok()
        })
        .as_ref()
}

/// `(data, dimensions, strides)` of a numpy array, read from its object: numpy's
/// `PyArrayObject_fields` begin, after the object header, with the data pointer, the
/// rank, then the dimension and stride arrays (the layout every compiled numpy
/// extension reads through numpy's inline accessors).
fn array_fields(a: &Bound<'_, PyAny>) -> Option<(usize, Vec<isize>, Vec<isize>)> {
    #[repr(C)]
    struct Fields {
        ob_refcnt: isize,
        ob_type: *mut std::ffi::c_void,
        data: *mut u8,
        nd: std::ffi::c_int,
        dimensions: *const isize,
        strides: *const isize,
    }
    // SAFETY: `a` is a numpy.ndarray (checked by every caller), whose
    // object starts with these fields; the arrays hold `nd` entries and live as long
    // as `a`.
    unsafe {
        let f = &*(a.as_ptr() as *const Fields);
        let nd = usize::try_from(f.nd).ok()?;
        if nd > 0 && (f.dimensions.is_null() || f.strides.is_null()) {
            return None;
        }
        let slice = |p: *const isize| {
            if nd == 0 {
                Vec::new()
            } else {
                std::slice::from_raw_parts(p, nd).to_vec()
            }
        };
        Some((f.data as usize, slice(f.dimensions), slice(f.strides)))
    }
}

/// The input specs (dtype, shape) and output specs of a program.
pub struct Specs {
    pub inputs: Vec<(DType, Vec<i64>)>,
    pub outputs: Vec<(DType, Vec<i64>)>,
}

/// The caller's arrays as `(address, bytes)` and the new outputs with theirs, or
/// `None` where the Python path must decide.
pub struct Marshalled<'py> {
    pub inputs: Vec<(usize, usize)>,
    pub outputs: Vec<(Bound<'py, PyAny>, (usize, usize))>,
}

fn bytes_of(d: DType, shape: &[i64]) -> usize {
    shape.iter().map(|&s| s.max(0) as usize).product::<usize>() * d.size_in_bytes()
}

pub fn marshal<'py>(
    py: Python<'py>,
    specs: &Specs,
    args: &Bound<'py, PyTuple>,
) -> Option<Marshalled<'py>> {
    if args.len() != specs.inputs.len() || args.is_empty() {
        return None;
    }
    let first = args.get_item(0).ok()?;
    let lib = match torch(py) {
        Some(t) if t.owns(py, &first) => Torch(t),
        _ => Numpy(numpy(py)?),
    };
    let mut inputs = Vec::with_capacity(args.len());
    for (arg, (d, shape)) in args.iter().zip(&specs.inputs) {
        inputs.push(lib.view(py, &arg, *d, shape)?);
    }
    let mut outputs = Vec::with_capacity(specs.outputs.len());
    for (d, shape) in &specs.outputs {
        outputs.push(lib.empty(py, *d, shape)?);
    }
    Some(Marshalled { inputs, outputs })
}

enum Lib {
    Torch(&'static Library),
    Numpy(&'static Library),
}
use Lib::{Numpy, Torch};

impl Lib {
    fn library(&self) -> &'static Library {
        match self {
            Torch(l) | Numpy(l) => l,
        }
    }

    /// `(address, bytes)` of `arg` if it is this library's array, on the host,
    /// contiguous, of dtype `d` and shape `shape`.
    fn view(
        &self,
        py: Python<'_>,
        arg: &Bound<'_, PyAny>,
        d: DType,
        shape: &[i64],
    ) -> Option<(usize, usize)> {
        let lib = self.library();
        if !lib.owns(py, arg) {
            return None;
        }
        if !arg
            .getattr(intern!(py, "dtype"))
            .ok()?
            .is(lib.dtype_object(d)?)
        {
            return None;
        }
        let bytes = bytes_of(d, shape);
        match self {
            Torch(_) => {
                let on_host = arg.getattr(intern!(py, "is_cpu")).ok()?.is_truthy().ok()?;
                let dense = arg
                    .call_method0(intern!(py, "is_contiguous"))
                    .ok()?
                    .is_truthy()
                    .ok()?;
                // A negative view (`z.conj().imag`, `torch._neg_view`) holds its values
                // negated only once resolved: the memory is its base's.
                let negative = arg
                    .call_method0(intern!(py, "is_neg"))
                    .ok()?
                    .is_truthy()
                    .ok()?;
                let got: Vec<i64> = arg.getattr(intern!(py, "shape")).ok()?.extract().ok()?;
                if !on_host || !dense || negative || got != shape {
                    return None;
                }
                let address: usize = arg
                    .call_method0(intern!(py, "data_ptr"))
                    .ok()?
                    .extract()
                    .ok()?;
                Some((address, bytes))
            }
            Numpy(_) => {
                let (address, dims, strides) = array_fields(arg)?;
                let same_shape = dims.len() == shape.len()
                    && dims.iter().zip(shape).all(|(&a, &b)| a as i64 == b);
                if !same_shape || !row_major(&dims, &strides, d.size_in_bytes()) {
                    return None;
                }
                Some((address, bytes))
            }
        }
    }

    /// A new array of dtype `d` and shape `shape`, and its `(address, bytes)`.
    fn empty<'py>(
        &self,
        py: Python<'py>,
        d: DType,
        shape: &[i64],
    ) -> Option<(Bound<'py, PyAny>, (usize, usize))> {
        let lib = self.library();
        let dims = PyTuple::new(py, shape).ok()?;
        let dtype = lib.dtype_object(d)?.bind(py);
        let array = match self {
            Torch(_) => {
                let kwargs = PyDict::new(py);
                kwargs.set_item(intern!(py, "dtype"), dtype).ok()?;
                kwargs
                    .set_item(intern!(py, "device"), lib.host.as_ref()?.bind(py))
                    .ok()?;
                // torch.empty(*shape, dtype=d): shape as separate arguments is torch's
                // fastest parse (a shape tuple costs twice as much).
                if shape.is_empty() {
                    lib.empty.bind(py).call(((),), Some(&kwargs)).ok()?
                } else {
                    lib.empty.bind(py).call(dims, Some(&kwargs)).ok()?
                }
            }
            Numpy(_) => lib.empty.bind(py).call1((dims, dtype)).ok()?,
        };
        let address = match self {
            Torch(_) => array
                .call_method0(intern!(py, "data_ptr"))
                .ok()?
                .extract()
                .ok()?,
            Numpy(_) => array_fields(&array)?.0,
        };
        Some((array, (address, bytes_of(d, shape))))
    }
}

/// Whether strides describe a dense row-major array of `element`-byte items (sizes 1
/// and 0 ignore their stride, as numpy's own contiguity flag does).
fn row_major(dims: &[isize], strides: &[isize], element: usize) -> bool {
    if dims.contains(&0) {
        return true;
    }
    let mut want = element as isize;
    for (&d, &s) in dims.iter().zip(strides).rev() {
        if d != 1 && s != want {
            return false;
        }
        want *= d;
    }
    true
}

/// The outputs as `program(...)` returns them: the single array, or a tuple.
pub fn result(py: Python<'_>, outputs: Vec<Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
    if outputs.len() == 1 {
        return Ok(outputs.into_iter().next().expect("one").unbind());
    }
    PyTuple::new(py, outputs)?.into_py_any(py)
}
