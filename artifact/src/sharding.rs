//! Device meshes and tensor shardings: the one definition the compiler (annotation,
//! propagation, the Shardy and GSPMD texts), the manifest and the runtime (splitting
//! weights and inputs per device, assembling outputs) share.
//!
//! A [`Mesh`] names axes with sizes (`dp=2,tp=4`); its positions are numbered row-major
//! over the axes (the last axis varies fastest). Position `p` is partition `p` of the
//! SPMD program (the number the GSPMD and Shardy texts use), and `device_ids[p]` the
//! device that runs it (the compile options' device assignment; by default device `p`).
//! A [`TensorSharding`] says, for each dimension of a tensor, which mesh axes split
//! it (major to minor); axes it does not name hold replicas. A dimension split over
//! axes of total size `k` must be a multiple of `k`: shards are equal, as XLA's SPMD
//! partitioner and Shardy require for exact results without padding.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::tensor::HostTensor;

/// A mistake in a mesh or a sharding (an unknown axis, a size that does not divide).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShardingError(pub String);

type Result<T> = std::result::Result<T, ShardingError>;

fn err<T>(message: impl Into<String>) -> Result<T> {
    Err(ShardingError(message.into()))
}

/// One named axis of a mesh.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeshAxis {
    pub name: String,
    pub size: i64,
}

/// Named axes and the devices at each position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mesh {
    pub axes: Vec<MeshAxis>,
    /// The device that runs each mesh position (partition), row-major over `axes`.
    pub device_ids: Vec<i64>,
}

impl Mesh {
    /// `dp=2,tp=4`: axis names (letters, digits, `_`; starting with a letter) and sizes
    /// of at least 1, each name once. Devices in order.
    pub fn parse(text: &str) -> Result<Mesh> {
        let mut axes: Vec<MeshAxis> = Vec::new();
        for part in text.split(',').map(str::trim) {
            let Some((name, size)) = part.split_once('=') else {
                return err(format!(
                    "mesh axis `{part}` is not NAME=SIZE (for example `--mesh dp=2,tp=4`)"
                ));
            };
            let (name, size) = (name.trim(), size.trim());
            let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return err(format!(
                    "mesh axis name `{name}` must start with a letter and hold only letters, digits and `_`"
                ));
            }
            let size: i64 = match size.parse() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return err(format!(
                        "mesh axis `{name}` has size `{size}`; sizes are integers of at least 1"
                    ))
                }
            };
            if axes.iter().any(|a| a.name == name) {
                return err(format!("mesh axis `{name}` is named twice"));
            }
            axes.push(MeshAxis {
                name: name.to_string(),
                size,
            });
        }
        Mesh::new(axes, None)
    }

    /// A mesh with `device_ids` (default: `0..n`), checked: a permutation of
    /// `0..n` where `n` is the product of the axis sizes.
    pub fn new(axes: Vec<MeshAxis>, device_ids: Option<Vec<i64>>) -> Result<Mesh> {
        if axes.is_empty() {
            return err("a mesh needs at least one axis");
        }
        let n = axes
            .iter()
            .try_fold(1i64, |n, a| n.checked_mul(a.size))
            .filter(|&n| n <= 1 << 20)
            .ok_or_else(|| ShardingError("the mesh has too many devices".into()))?;
        let device_ids = device_ids.unwrap_or_else(|| (0..n).collect());
        let mut sorted = device_ids.clone();
        sorted.sort_unstable();
        if sorted != (0..n).collect::<Vec<_>>() {
            return err(format!(
                "the device order must list each of the {n} devices 0..{} once",
                n - 1
            ));
        }
        Ok(Mesh { axes, device_ids })
    }

    pub fn num_devices(&self) -> usize {
        self.device_ids.len()
    }

    pub fn axis(&self, name: &str) -> Option<&MeshAxis> {
        self.axes.iter().find(|a| a.name == name)
    }

    /// The size of axis `name`, an error naming the known axes when there is none.
    pub fn axis_size(&self, name: &str) -> Result<i64> {
        match self.axis(name) {
            Some(a) => Ok(a.size),
            None => err(format!(
                "the mesh has no axis `{name}` (its axes: {})",
                self
            )),
        }
    }

    /// The Shardy form: `#sdy.mesh<["dp"=2, "tp"=4]>` (with `device_ids=[...]` when
    /// the device order is not the default).
    pub fn shardy(&self) -> String {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|a| format!("\"{}\"={}", a.name, a.size))
            .collect();
        let default_order = self
            .device_ids
            .iter()
            .enumerate()
            .all(|(i, &d)| d == i as i64);
        let ids = if default_order {
            String::new()
        } else {
            let ids: Vec<String> = self.device_ids.iter().map(i64::to_string).collect();
            format!(", device_ids=[{}]", ids.join(", "))
        };
        format!("#sdy.mesh<[{}]{ids}>", axes.join(", "))
    }

    /// The coordinates of mesh position `position` (row-major), one per axis.
    pub fn coordinates(&self, position: usize) -> Vec<i64> {
        let mut rest = position as i64;
        let mut coords = vec![0; self.axes.len()];
        for (i, a) in self.axes.iter().enumerate().rev() {
            coords[i] = rest % a.size;
            rest /= a.size;
        }
        coords
    }
}

impl fmt::Display for Mesh {
    /// `dp=2,tp=4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .axes
            .iter()
            .map(|a| format!("{}={}", a.name, a.size))
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// The mesh axes that split each dimension of a tensor (major to minor); an empty
/// list keeps the dimension whole. Axes named nowhere hold replicas.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TensorSharding {
    pub dims: Vec<Vec<String>>,
}

impl TensorSharding {
    /// Every dimension whole: a full copy on every device.
    pub fn replicated(rank: usize) -> TensorSharding {
        TensorSharding {
            dims: vec![Vec::new(); rank],
        }
    }

    /// Dimension `dim` split over `axes`, the others whole.
    pub fn split(rank: usize, dim: usize, axes: &[&str]) -> TensorSharding {
        let mut s = TensorSharding::replicated(rank);
        s.dims[dim] = axes.iter().map(|a| a.to_string()).collect();
        s
    }

    /// Reads the [`fmt::Display`] form back: `[dp, -]`, `[(dp,tp), -]`, `[]`.
    pub fn parse(text: &str) -> Result<TensorSharding> {
        let bad = || ShardingError(format!("`{text}` is not a sharding such as `[dp, -]`"));
        let inner = text
            .trim()
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .ok_or_else(bad)?;
        if inner.trim().is_empty() {
            return Ok(TensorSharding::default());
        }
        // The parts between the commas outside parentheses.
        let mut parts = Vec::new();
        let (mut depth, mut start) = (0i32, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&inner[start..]);
        let mut dims = Vec::new();
        for part in parts.iter().map(|p| p.trim()) {
            let axes: Vec<String> = match part {
                "-" => Vec::new(),
                p if p.starts_with('(') && p.ends_with(')') => p[1..p.len() - 1]
                    .split(',')
                    .map(|a| a.trim().to_string())
                    .collect(),
                p => vec![p.to_string()],
            };
            if axes
                .iter()
                .any(|a| a.is_empty() || a.contains(['(', ')', ' ']))
            {
                return Err(bad());
            }
            dims.push(axes);
        }
        Ok(TensorSharding { dims })
    }

    pub fn is_replicated(&self) -> bool {
        self.dims.iter().all(Vec::is_empty)
    }

    /// Checks the sharding against `mesh` and a tensor of `shape`: known axes, each
    /// axis used once, and every split dimension a multiple of its shard count.
    pub fn check(&self, mesh: &Mesh, shape: &[i64]) -> Result<()> {
        if self.dims.len() != shape.len() {
            return err(format!(
                "the sharding names {} dimensions for a tensor of rank {}",
                self.dims.len(),
                shape.len()
            ));
        }
        let mut used: Vec<&str> = Vec::new();
        for (d, axes) in self.dims.iter().enumerate() {
            let mut k = 1;
            for a in axes {
                k *= mesh.axis_size(a)?;
                if used.contains(&a.as_str()) {
                    return err(format!("mesh axis `{a}` splits two dimensions"));
                }
                used.push(a);
            }
            if shape[d] % k != 0 {
                return err(format!(
                    "dimension {d} (size {}) cannot be split in {k} equal parts over {}",
                    shape[d],
                    axes.join("×")
                ));
            }
        }
        Ok(())
    }

    /// Number of shards of each dimension.
    pub fn shard_counts(&self, mesh: &Mesh) -> Result<Vec<i64>> {
        self.dims
            .iter()
            .map(|axes| axes.iter().try_fold(1, |k, a| Ok(k * mesh.axis_size(a)?)))
            .collect()
    }

    /// How many pieces the sharding cuts a tensor into (the product of its dimensions'
    /// shard counts; an axis the mesh lacks counts as 1).
    pub fn num_pieces(&self, mesh: &Mesh) -> u64 {
        self.dims
            .iter()
            .flatten()
            .map(|a| mesh.axis_size(a).unwrap_or(1).max(1) as u64)
            .product()
    }

    /// The shape of one shard of a tensor of `shape`.
    pub fn shard_shape(&self, mesh: &Mesh, shape: &[i64]) -> Result<Vec<i64>> {
        self.check(mesh, shape)?;
        let counts = self.shard_counts(mesh)?;
        Ok(shape.iter().zip(&counts).map(|(s, k)| s / k).collect())
    }

    /// Which shard of each dimension the device at mesh position `position` holds.
    pub fn shard_index(&self, mesh: &Mesh, position: usize) -> Result<Vec<i64>> {
        let coords = mesh.coordinates(position);
        self.dims
            .iter()
            .map(|axes| {
                axes.iter().try_fold(0, |i, a| {
                    let at = mesh
                        .axes
                        .iter()
                        .position(|m| &m.name == a)
                        .ok_or_else(|| ShardingError(format!("the mesh has no axis `{a}`")))?;
                    Ok(i * mesh.axes[at].size + coords[at])
                })
            })
            .collect()
    }

    /// The shard of `tensor` each mesh position holds, in mesh position order.
    pub fn split_tensor(&self, mesh: &Mesh, tensor: &HostTensor) -> Result<Vec<HostTensor>> {
        let shard = self.shard_shape(mesh, &tensor.shape)?;
        (0..mesh.num_devices())
            .map(|p| {
                let index = self.shard_index(mesh, p)?;
                Ok(copy_block(tensor, &shard, &index))
            })
            .collect()
    }

    /// The whole tensor of `shape` from the shard each mesh position holds (in mesh
    /// position order); of replicas, the first position's copy is taken.
    pub fn assemble(
        &self,
        mesh: &Mesh,
        shape: &[i64],
        shards: &[HostTensor],
    ) -> Result<HostTensor> {
        let shard = self.shard_shape(mesh, shape)?;
        if shards.len() != mesh.num_devices() {
            return err(format!(
                "{} shards for a mesh of {} devices",
                shards.len(),
                mesh.num_devices()
            ));
        }
        let dtype = shards.first().map(|s| s.dtype).unwrap_or(crate::DType::F32);
        let elem = dtype.size_in_bytes();
        let n: i64 = shape.iter().product();
        let mut out = HostTensor {
            dtype,
            shape: shape.to_vec(),
            data: vec![0; n as usize * elem],
        };
        let counts = self.shard_counts(mesh)?;
        let mut filled = vec![false; counts.iter().product::<i64>() as usize];
        for (p, s) in shards.iter().enumerate() {
            if s.dtype != dtype || s.shape != shard {
                return err(format!(
                    "the shard of device {p} is {}{:?}, expected {dtype}{shard:?}",
                    s.dtype, s.shape
                ));
            }
            let index = self.shard_index(mesh, p)?;
            let flat = index.iter().zip(&counts).fold(0, |f, (i, k)| f * k + i) as usize;
            if !filled[flat] {
                filled[flat] = true;
                place_block(&mut out, s, &index);
            }
        }
        Ok(out)
    }

    /// The GSPMD form (`mhlo.sharding`): `{replicated}`, or the tile counts of each
    /// dimension (then the replica count, with `last_tile_dim_replicate`) and the
    /// partition at each tile, row-major.
    pub fn gspmd(&self, mesh: &Mesh) -> Result<String> {
        if self.is_replicated() {
            return Ok("{replicated}".into());
        }
        let counts = self.shard_counts(mesh)?;
        let tiles: i64 = counts.iter().product();
        let replicas = mesh.num_devices() as i64 / tiles;
        // Partition at (tile, replica): the mesh positions in order, placed by their
        // shard index and their rank among the positions that hold the same shard.
        let mut grid = vec![-1i64; mesh.num_devices()];
        let mut seen = vec![0i64; tiles as usize];
        for p in 0..mesh.num_devices() {
            let index = self.shard_index(mesh, p)?;
            let flat = index.iter().zip(&counts).fold(0, |f, (i, k)| f * k + i) as usize;
            grid[flat * replicas as usize + seen[flat] as usize] = p as i64;
            seen[flat] += 1;
        }
        let mut dims: Vec<String> = counts.iter().map(i64::to_string).collect();
        if replicas > 1 {
            dims.push(replicas.to_string());
        }
        let devices: Vec<String> = grid.iter().map(i64::to_string).collect();
        Ok(format!(
            "{{devices=[{}]{}{}}}",
            dims.join(","),
            devices.join(","),
            if replicas > 1 {
                " last_tile_dim_replicate"
            } else {
                ""
            }
        ))
    }

    /// The Shardy form on mesh `@mesh_name`: `#sdy.sharding<@mesh, [{"dp"}, {}]>`.
    pub fn shardy(&self, mesh_name: &str) -> String {
        let dims: Vec<String> = self
            .dims
            .iter()
            .map(|axes| {
                let names: Vec<String> = axes.iter().map(|a| format!("\"{a}\"")).collect();
                format!("{{{}}}", names.join(", "))
            })
            .collect();
        format!("#sdy.sharding<@{mesh_name}, [{}]>", dims.join(", "))
    }
}

impl fmt::Display for TensorSharding {
    /// `[dp, -]`, `[-, tp]`, `[(dp,tp), -]`: per dimension its axes, `-` when whole.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self
            .dims
            .iter()
            .map(|axes| match axes.len() {
                0 => "-".to_string(),
                1 => axes[0].clone(),
                _ => format!("({})", axes.join(",")),
            })
            .collect();
        write!(f, "[{}]", dims.join(", "))
    }
}

/// Row-major strides in elements.
fn strides(shape: &[i64]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1].max(0) as usize;
    }
    s
}

/// Calls `f(offset in the whole tensor, offset in the block)` (in elements) for the
/// start of every contiguous run of the last dimension of the block at `index`.
fn for_each_run(whole: &[i64], block: &[i64], index: &[i64], mut f: impl FnMut(usize, usize)) {
    let (ws, bs) = (strides(whole), strides(block));
    let rank = whole.len();
    if rank == 0 {
        f(0, 0);
        return;
    }
    if block.contains(&0) {
        return;
    }
    let mut at = vec![0i64; rank.saturating_sub(1)];
    loop {
        let mut w = index[rank - 1] as usize * block[rank - 1] as usize;
        let mut b = 0;
        for d in 0..rank - 1 {
            w += (index[d] * block[d] + at[d]) as usize * ws[d];
            b += at[d] as usize * bs[d];
        }
        f(w, b);
        // Next run: advance the leading coordinates, last fastest.
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            at[d] += 1;
            if at[d] < block[d] {
                break;
            }
            at[d] = 0;
        }
    }
}

fn copy_block(t: &HostTensor, block: &[i64], index: &[i64]) -> HostTensor {
    let elem = t.dtype.size_in_bytes();
    let n: i64 = block.iter().product();
    let run = block.last().copied().unwrap_or(1) as usize * elem;
    let mut data = vec![0u8; n as usize * elem];
    for_each_run(&t.shape, block, index, |w, b| {
        data[b * elem..b * elem + run].copy_from_slice(&t.data[w * elem..w * elem + run]);
    });
    HostTensor {
        dtype: t.dtype,
        shape: block.to_vec(),
        data,
    }
}

fn place_block(out: &mut HostTensor, block: &HostTensor, index: &[i64]) {
    let elem = out.dtype.size_in_bytes();
    let run = block.shape.last().copied().unwrap_or(1) as usize * elem;
    let whole = out.shape.clone();
    for_each_run(&whole, &block.shape, index, |w, b| {
        out.data[w * elem..w * elem + run].copy_from_slice(&block.data[b * elem..b * elem + run]);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iota(shape: &[i64]) -> HostTensor {
        let n: i64 = shape.iter().product();
        let v: Vec<f32> = (0..n).map(|i| i as f32).collect();
        HostTensor::from_f32(shape, &v)
    }

    #[test]
    fn meshes_parse_and_number_devices_row_major() {
        let m = Mesh::parse("dp=2, tp=3").unwrap();
        assert_eq!(m.num_devices(), 6);
        assert_eq!(m.to_string(), "dp=2,tp=3");
        assert_eq!(m.coordinates(4), vec![1, 1]);
        for bad in ["dp", "dp=0", "dp=x", "2=2", "dp=2,dp=2", ""] {
            assert!(Mesh::parse(bad).is_err(), "{bad}");
        }
        assert!(Mesh::new(m.axes.clone(), Some(vec![0, 1, 2, 3, 4, 4])).is_err());
    }

    #[test]
    fn split_then_assemble_gives_the_tensor_back() {
        let mesh = Mesh::parse("dp=2,tp=2").unwrap();
        let t = iota(&[4, 6, 2]);
        for s in [
            TensorSharding::replicated(3),
            TensorSharding::split(3, 0, &["dp"]),
            TensorSharding::split(3, 1, &["tp"]),
            TensorSharding::split(3, 2, &["dp"]),
            TensorSharding::split(3, 0, &["dp", "tp"]),
            TensorSharding {
                dims: vec![vec!["tp".into()], vec!["dp".into()], vec![]],
            },
        ] {
            let parts = s.split_tensor(&mesh, &t).unwrap();
            assert_eq!(parts.len(), 4);
            assert_eq!(s.assemble(&mesh, &t.shape, &parts).unwrap(), t, "{s}");
        }
    }

    #[test]
    fn shards_hold_the_expected_blocks() {
        let mesh = Mesh::parse("dp=2,tp=2").unwrap();
        let t = iota(&[2, 4]);
        // Columns over tp, rows replicated over dp: position 1 is (dp 0, tp 1).
        let s = TensorSharding::split(2, 1, &["tp"]);
        let parts = s.split_tensor(&mesh, &t).unwrap();
        assert_eq!(parts[1].shape, vec![2, 2]);
        assert_eq!(parts[1].to_f64_vec(), vec![2.0, 3.0, 6.0, 7.0]);
        assert_eq!(parts[3], parts[1]);
        // Rows over (dp, tp): four single rows of a [4, 1] tensor, in order.
        let t = iota(&[4, 1]);
        let s = TensorSharding::split(2, 0, &["dp", "tp"]);
        let v: Vec<f64> = s
            .split_tensor(&mesh, &t)
            .unwrap()
            .iter()
            .map(|p| p.to_f64_vec()[0])
            .collect();
        assert_eq!(v, vec![0.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn bad_shardings_are_named() {
        let mesh = Mesh::parse("dp=2,tp=4").unwrap();
        let e = TensorSharding::split(2, 1, &["tp"]).check(&mesh, &[2, 6]);
        assert!(e.unwrap_err().0.contains("dimension 1 (size 6)"));
        let e = TensorSharding::split(2, 0, &["x"]).check(&mesh, &[2, 6]);
        assert!(e.unwrap_err().0.contains("no axis `x`"));
        let s = TensorSharding {
            dims: vec![vec!["dp".into()], vec!["dp".into()]],
        };
        assert!(s
            .check(&mesh, &[2, 2])
            .unwrap_err()
            .0
            .contains("two dimensions"));
    }

    #[test]
    fn gspmd_and_shardy_texts() {
        let mesh = Mesh::parse("dp=2,tp=2").unwrap();
        let r = TensorSharding::replicated(2);
        assert_eq!(r.gspmd(&mesh).unwrap(), "{replicated}");
        let rows = TensorSharding::split(2, 0, &["dp"]);
        assert_eq!(
            rows.gspmd(&mesh).unwrap(),
            "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"
        );
        // Columns over tp: tile 0 on positions (0,0) and (1,0), i.e. devices 0 and 2.
        let cols = TensorSharding::split(2, 1, &["tp"]);
        assert_eq!(
            cols.gspmd(&mesh).unwrap(),
            "{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}"
        );
        let both = TensorSharding {
            dims: vec![vec!["dp".into()], vec!["tp".into()]],
        };
        assert_eq!(both.gspmd(&mesh).unwrap(), "{devices=[2,2]0,1,2,3}");
        assert_eq!(
            both.shardy("mesh"),
            "#sdy.sharding<@mesh, [{\"dp\"}, {\"tp\"}]>"
        );
        assert_eq!(both.to_string(), "[dp, tp]");
        assert_eq!(mesh.shardy(), "#sdy.mesh<[\"dp\"=2, \"tp\"=2]>");
    }

    #[test]
    fn display_form_reads_back() {
        for text in ["[dp, -]", "[-, tp]", "[(dp,tp), -, -]", "[]", "[-]"] {
            let s = TensorSharding::parse(text).unwrap();
            assert_eq!(s.to_string(), text);
        }
        assert_eq!(
            TensorSharding::parse("[(dp,tp), -]").unwrap().dims[0],
            vec!["dp".to_string(), "tp".to_string()]
        );
        for bad in ["dp", "[dp", "[, dp]", "[(dp, -]"] {
            assert!(TensorSharding::parse(bad).is_err(), "{bad}");
        }
    }
}
