//! Everything that talks to hwloc: loading (host, synthetic, XML), converting
//! hwloc's tree into the [`Topology`] model, pinning, XML export.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;

use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::cpu::cpuset::CpuSet;
use hwlocality::object::attributes::ObjectAttributes;
use hwlocality::object::distance::{AddDistancesFlags, DistancesKind};
use hwlocality::object::types::ObjectType;
use hwlocality::object::TopologyObject;
use hwlocality::topology::export::xml::XMLExportFlags;

use crate::error::TopologyError;
use crate::matrix::{self, ParsedMatrix};
use crate::model::{Level, NumaDistances, RawObject, Topology};
use crate::presets;
use crate::spec::{split_synthetic, synthetic_pus, InlineDistances, TopologySpec};

type HwTopology = hwlocality::Topology;

/// Runs an hwloc call, turning a panic inside the bindings into an error
/// message (hwlocality panics on errno values it does not expect).
fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "unknown failure".to_owned());
            Err(format!("hwloc failed unexpectedly: {msg}"))
        }
    }
}

/// Builds an hwloc topology from a synthetic description.
fn hwloc_synthetic(desc: &str) -> Result<HwTopology, String> {
    if desc.trim().is_empty() {
        return Err("the description is empty".to_owned());
    }
    guarded(|| {
        let builder = HwTopology::builder()
            .from_synthetic(desc)
            .map_err(|e| e.to_string())?;
        builder
            .build()
            .map_err(|e| format!("hwloc could not build it ({e})"))
    })
}

fn map_level(obj: &TopologyObject) -> Option<Level> {
    match obj.object_type() {
        ObjectType::Machine => Some(Level::Machine),
        ObjectType::Package => Some(Level::Package),
        ObjectType::NUMANode => Some(Level::Numa),
        ObjectType::L3Cache => Some(Level::L3),
        ObjectType::L2Cache => Some(Level::L2),
        ObjectType::L1Cache => Some(Level::L1),
        ObjectType::Core => Some(Level::Core),
        ObjectType::PU => Some(Level::Pu),
        _ => None,
    }
}

fn object_size(obj: &TopologyObject) -> Option<u64> {
    match obj.attributes()? {
        ObjectAttributes::Cache(c) => c.size().map(|s| s.get()),
        ObjectAttributes::NUMANode(n) => n.local_memory().map(|s| s.get()),
        _ => None,
    }
}

/// [`TopologyError::TooManyPus`] if `pus` exceeds [`Topology::MAX_PUS`].
fn check_pus(pus: usize, spec: &TopologySpec) -> Result<(), TopologyError> {
    if pus > Topology::MAX_PUS {
        return Err(TopologyError::TooManyPus {
            topology: spec.to_string(),
            pus,
            max: Topology::MAX_PUS,
        });
    }
    Ok(())
}

/// Converts hwloc's tree into the model (without distances); refuses more than
/// [`Topology::MAX_PUS`] PUs.
fn convert(hw: &HwTopology, spec: TopologySpec, real: bool) -> Result<Topology, TopologyError> {
    let pus: Vec<&TopologyObject> = hw.objects_with_type(ObjectType::PU).collect();
    check_pus(pus.len(), &spec)?;
    let pu_os: Vec<usize> = pus
        .iter()
        .enumerate()
        .map(|(i, p)| p.os_index().unwrap_or(i))
        .collect();
    let logical_of_os: HashMap<usize, usize> =
        pu_os.iter().enumerate().map(|(l, &os)| (os, l)).collect();
    let mut raw = Vec::new();
    for ty in [
        ObjectType::Package,
        ObjectType::NUMANode,
        ObjectType::L3Cache,
        ObjectType::L2Cache,
        ObjectType::L1Cache,
        ObjectType::Core,
        ObjectType::PU,
    ] {
        for obj in hw.objects_with_type(ty) {
            let Some(level) = map_level(obj) else {
                continue;
            };
            let Some(cpuset) = obj.cpuset() else {
                continue;
            };
            let pus: Vec<usize> = cpuset
                .iter_set()
                .filter_map(|idx| logical_of_os.get(&usize::from(idx)).copied())
                .collect();
            raw.push(RawObject {
                level,
                os_index: obj.os_index(),
                pus,
                size: object_size(obj),
                key: obj.logical_index(),
            });
        }
    }
    let mut topo = Topology::assemble(spec, real, &pu_os, raw);
    let root_mem = hw.root_object().total_memory();
    if root_mem > 0 {
        topo.objects[0].size = Some(root_mem);
    }
    Ok(topo)
}

/// The NUMA distance matrix hwloc knows, in the model's NUMA order. Latency-like
/// matrices are preferred; a bandwidth matrix is inverted (1/x).
fn hwloc_distances(
    hw: &HwTopology,
    topo: &Topology,
    source: &str,
) -> Option<Result<NumaDistances, TopologyError>> {
    let nodes: Vec<&TopologyObject> = hw.objects_with_type(ObjectType::NUMANode).collect();
    let wanted: Vec<&TopologyObject> = topo
        .numa_keys
        .iter()
        .filter_map(|&k| nodes.iter().copied().find(|o| o.logical_index() == k))
        .collect();
    if wanted.len() != topo.numa_node_count() || wanted.len() < 2 {
        return None;
    }
    let all = hw.distances_with_type(None, ObjectType::NUMANode).ok()?;
    let mut best: Option<(bool, Vec<f64>, String)> = None;
    for d in &all {
        let idx: Option<Vec<usize>> = wanted.iter().map(|o| d.object_idx(o)).collect();
        let Some(idx) = idx else { continue };
        let bandwidth = d.kind().contains(DistancesKind::MEANS_BANDWIDTH);
        let m = d.num_objects();
        let raw = d.distances();
        let mut values = Vec::with_capacity(idx.len() * idx.len());
        let mut usable = true;
        for &i in &idx {
            for &j in &idx {
                let v = raw[i * m + j] as f64;
                if bandwidth {
                    if v == 0.0 {
                        usable = false;
                    }
                    values.push(if v == 0.0 { 0.0 } else { 1.0 / v });
                } else {
                    values.push(v);
                }
            }
        }
        if !usable {
            continue;
        }
        let name = d
            .name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "unnamed".to_owned());
        let label = if bandwidth {
            format!("{source} (hwloc {name} bandwidth matrix, inverted)")
        } else {
            format!("{source} (hwloc {name} matrix)")
        };
        if best.as_ref().is_none_or(|(bw, _, _)| *bw && !bandwidth) {
            best = Some((bandwidth, values, label));
        }
    }
    let (_, values, label) = best?;
    Some(NumaDistances::new(wanted.len(), values, &label))
}

fn distances_from_parsed(m: &ParsedMatrix, input: &str) -> Result<NumaDistances, TopologyError> {
    matrix::check_row_diagonal(m, input)?;
    NumaDistances::new(m.n, m.values.clone(), input)
}

impl Topology {
    /// Loads a topology.
    ///
    /// - `host`: hwloc discovers this machine (the PUs this process may use);
    ///   the NUMA distances are hwloc's, when it has them.
    /// - `preset:NAME`: a shipped machine description (synthetic + distances).
    /// - `synthetic:DESC[;distances=…]`: hwloc builds the machine from `DESC`.
    /// - `xml:FILE`: hwloc reads its own XML export, distances included.
    ///
    /// # Errors
    /// A [`TopologyError`] that names the spec, file, line and column at fault;
    /// [`TopologyError::TooManyPus`] for a machine of more than
    /// [`MAX_PUS`](Topology::MAX_PUS) PUs.
    pub fn load(spec: &TopologySpec) -> Result<Topology, TopologyError> {
        match spec {
            TopologySpec::Host => Self::load_host(),
            TopologySpec::Preset(name) => Self::load_preset(name),
            TopologySpec::Synthetic(full) => Self::load_synthetic(full),
            TopologySpec::Xml(path) => Self::load_xml(path),
        }
    }

    fn load_host() -> Result<Topology, TopologyError> {
        let hw = guarded(|| HwTopology::new().map_err(|e| e.to_string()))
            .map_err(|reason| TopologyError::Host { reason })?;
        let mut topo = convert(&hw, TopologySpec::Host, true)?;
        // A broken firmware table must not make the machine unusable: drop it.
        if let Some(Ok(d)) = hwloc_distances(&hw, &topo, "host") {
            topo.distances = Some(d);
        }
        topo.hwloc = Some(Arc::new(hw));
        Ok(topo)
    }

    fn load_preset(name: &str) -> Result<Topology, TopologyError> {
        let preset = presets::find(name)?;
        let broken = |reason: String| TopologyError::BrokenPreset {
            name: preset.name.to_owned(),
            reason,
        };
        let hw = hwloc_synthetic(&preset.synthetic)
            .map_err(|r| broken(format!("`{}`: {r}", preset.synthetic)))?;
        let mut topo = convert(&hw, TopologySpec::Preset(preset.name.to_owned()), false)?;
        topo.description = Some(preset.description.clone());
        if let Some(m) = &preset.distances {
            let input = format!("preset `{}`", preset.name);
            let d = distances_from_parsed(m, &input).map_err(|e| broken(e.to_string()))?;
            topo.set_distances(d).map_err(|e| broken(e.to_string()))?;
        }
        topo.hwloc = Some(Arc::new(hw));
        Ok(topo)
    }

    fn load_synthetic(full: &str) -> Result<Topology, TopologyError> {
        let (desc, dist) = split_synthetic(full)?;
        let spec = TopologySpec::Synthetic(full.to_owned());
        if let Some(pus) = synthetic_pus(&desc) {
            check_pus(pus, &spec)?;
        }
        let hw = hwloc_synthetic(&desc).map_err(|reason| TopologyError::Synthetic {
            desc: desc.clone(),
            reason,
        })?;
        let mut topo = convert(&hw, spec, false)?;
        match dist {
            None => {}
            Some(InlineDistances::Rows(rows)) => {
                let input = format!("`;distances=` of `synthetic:{full}` (rows separated by `/`)");
                let text = rows.replace('/', "\n");
                let m = matrix::parse_matrix(&text, &input, 0)?;
                topo.set_distances(distances_from_parsed(&m, &input)?)?;
            }
            Some(InlineDistances::File(path)) => {
                let text = std::fs::read_to_string(&path).map_err(|error| TopologyError::Io {
                    path: path.clone(),
                    error,
                })?;
                let input = path.display().to_string();
                let m = matrix::parse_matrix(&text, &input, 0)?;
                topo.set_distances(distances_from_parsed(&m, &input)?)?;
            }
        }
        topo.hwloc = Some(Arc::new(hw));
        Ok(topo)
    }

    fn load_xml(path: &Path) -> Result<Topology, TopologyError> {
        let xml_err = |reason: String| TopologyError::Xml {
            path: path.to_owned(),
            reason,
        };
        let bytes = std::fs::read(path).map_err(|e| xml_err(e.to_string()))?;
        let text = String::from_utf8(bytes).map_err(|_| xml_err("not UTF-8 text".to_owned()))?;
        if !text.trim_start().starts_with('<') {
            return Err(xml_err("not an XML document".to_owned()));
        }
        let hw = guarded(|| {
            HwTopology::builder()
                .from_xml(&text)
                .map_err(|e| e.to_string())?
                .build()
                .map_err(|e| format!("hwloc could not parse it as a topology ({e})"))
        })
        .map_err(xml_err)?;
        let mut topo = convert(&hw, TopologySpec::Xml(path.to_owned()), false)?;
        if topo.pu_count() == 0 {
            return Err(xml_err("the topology has no PUs".to_owned()));
        }
        if let Some(d) = hwloc_distances(&hw, &topo, &path.display().to_string()) {
            topo.distances = Some(d?);
        }
        topo.hwloc = Some(Arc::new(hw));
        Ok(topo)
    }

    /// Writes the topology as hwloc XML (the format `xml:FILE` reads), with the
    /// NUMA distance matrix included (hwloc stores integer distances, so
    /// fractional distances are rounded).
    ///
    /// # Errors
    /// [`TopologyError::Export`] if hwloc fails.
    pub fn export_xml(&self) -> Result<String, TopologyError> {
        let err = |reason: String| TopologyError::Export {
            topology: self.spec.to_string(),
            reason,
        };
        let Some(hw) = &self.hwloc else {
            return Err(err("no hwloc topology behind this model".to_owned()));
        };
        let mut hw: HwTopology = (**hw).clone();
        let has_hw_distances = hw
            .distances_with_type(None, ObjectType::NUMANode)
            .map(|v| !v.is_empty())
            .unwrap_or(false);
        if let (Some(d), false) = (&self.distances, has_hw_distances) {
            let keys = self.numa_keys.clone();
            let values: Vec<u64> = (0..d.size())
                .flat_map(|i| (0..d.size()).map(move |j| (i, j)))
                .map(|(i, j)| d.get(i, j).round() as u64)
                .collect();
            let result = guarded(|| {
                hw.edit(|editor| {
                    editor
                        .add_distances(
                            // No name: hwlocality 1.0.0-alpha.13 frees the name
                            // string before hwloc copies it (garbage in the XML).
                            None,
                            DistancesKind::FROM_USER | DistancesKind::MEANS_LATENCY,
                            AddDistancesFlags::empty(),
                            |t| {
                                let nodes: Vec<&TopologyObject> =
                                    t.objects_with_type(ObjectType::NUMANode).collect();
                                let objs = keys
                                    .iter()
                                    .map(|&k| {
                                        nodes.iter().copied().find(|o| o.logical_index() == k)
                                    })
                                    .collect();
                                (objs, values)
                            },
                        )
                        .map_err(|e| e.to_string())
                })
            });
            result.map_err(err)?;
        }
        let xml = guarded(|| {
            hw.export_xml(XMLExportFlags::empty())
                .map(|x| x.as_str().to_owned())
                .map_err(|e| e.to_string())
        })
        .map_err(err)?;
        Ok(xml)
    }
}

/// Pins the calling thread to PU `pu` (logical order) with hwloc's thread
/// CPU binding. The memory policy is left alone (first-touch), as
/// `docs/topology.md` ("Choosing a topology") documents.
///
/// A no-op returning `Ok(())` on topologies that are not the real machine
/// (presets, synthetic, XML): their workers run unpinned.
///
/// # Errors
/// [`TopologyError::NoSuchPu`] if `pu` is out of range, [`TopologyError::Pin`]
/// if the OS refuses the binding.
pub fn pin_current_thread(topo: &Topology, pu: usize) -> Result<(), TopologyError> {
    if !topo.is_real() {
        return Ok(());
    }
    if pu >= topo.pu_count() {
        return Err(TopologyError::NoSuchPu {
            pu,
            pus: topo.pu_count(),
            topology: topo.spec().to_string(),
        });
    }
    let os_index = topo.pu_os_index(pu);
    let Some(hw) = &topo.hwloc else {
        return Err(TopologyError::Pin {
            pu,
            os_index,
            reason: "no hwloc topology behind this model".to_owned(),
        });
    };
    guarded(|| {
        let mut set = CpuSet::new();
        set.set(os_index);
        hw.bind_cpu(&set, CpuBindingFlags::THREAD)
            .map_err(|e| e.to_string())
    })
    .map_err(|reason| TopologyError::Pin {
        pu,
        os_index,
        reason,
    })
}
