//! Checking a transfer request before the transfer exists: reader and writer names and their
//! compatibility, parameters, transformations and the job's resources. Every mistake a client
//! can fix is found here and named by field, so that a transfer that is queued can only fail
//! on its data.

use basin_formats::catalogue::{ReaderSpec, WriterSpec};
use basin_formats::{Catalogue, Parameters, Transformation};

use crate::config::TransfersConfig;
use crate::limits;
use crate::transfers::model::{ParameterValueDto, Resources, TransferRequest};

/// A request field that is wrong, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub(crate) struct Invalid {
    /// The field, as the client spells it (`readerName`, `transformations[1].outputSrid`).
    pub(crate) field: String,
    /// What is wrong.
    pub(crate) message: String,
}

/// An [`Invalid`] for `field`.
pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Invalid {
    Invalid {
        field: field.into(),
        message: message.into(),
    }
}

/// Names of the readers and writers a plan uses, with their checked parameters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Converters {
    /// Reader name as the catalogue spells it.
    pub(crate) reader: &'static str,
    /// Writer name as the catalogue spells it.
    pub(crate) writer: &'static str,
    /// The writer's dataset format (`.tif`).
    pub(crate) writer_format: &'static str,
    /// Reader parameters as text.
    pub(crate) reader_parameters: Vec<(String, String)>,
    /// Writer parameters as text.
    pub(crate) writer_parameters: Vec<(String, String)>,
    /// Transformations as sent.
    pub(crate) transformations: Vec<serde_json::Value>,
}

/// Resolves and checks reader, writer, parameters and transformations. `reader_default` and
/// `writer_default` are the stored formats the names are inferred from, where the operation
/// allows inference (`None`: the name is required).
pub(crate) fn converters(
    catalogue: &Catalogue,
    request: &TransferRequest,
    reader_default: Option<&str>,
    writer_default: Option<&str>,
) -> Result<Converters, Invalid> {
    let reader = resolve_reader(catalogue, request.reader_name.as_deref(), reader_default)?;
    let writer = resolve_writer(catalogue, request.writer_name.as_deref(), writer_default)?;
    let feeds = catalogue.writers_for(reader);
    if !feeds.contains(&writer.name) {
        return Err(invalid(
            "writerName",
            format!(
                "{} cannot feed {}; it can feed {}",
                reader.name,
                writer.name,
                feeds.join(", ")
            ),
        ));
    }
    let reader_parameters = parameters("readerParameters", request.reader_parameters.as_deref())?;
    Parameters::validate(reader.parameters, &reader_parameters)
        .map_err(|error| invalid("readerParameters", format!("{}: {error}", reader.name)))?;
    let writer_parameters = parameters("writerParameters", request.writer_parameters.as_deref())?;
    Parameters::validate(writer.parameters, &writer_parameters)
        .map_err(|error| invalid("writerParameters", format!("{}: {error}", writer.name)))?;
    let transformations = request.transformations.clone().unwrap_or_default();
    if transformations.len() > limits::TRANSFER_TRANSFORMATIONS_MAX {
        return Err(invalid(
            "transformations",
            format!(
                "at most {} transformations per transfer",
                limits::TRANSFER_TRANSFORMATIONS_MAX
            ),
        ));
    }
    let parsed = parse_transformations(&transformations)?;
    if !parsed.is_empty() && reader.name == basin_formats::file_copy::READER.name {
        return Err(invalid(
            "transformations",
            "a plain copy (FileReader to FileWriter) cannot apply transformations",
        ));
    }
    Ok(Converters {
        reader: reader.name,
        writer: writer.name,
        writer_format: writer.dataset_format,
        reader_parameters,
        writer_parameters,
        transformations,
    })
}

fn resolve_reader(
    catalogue: &Catalogue,
    name: Option<&str>,
    default_format: Option<&str>,
) -> Result<&'static ReaderSpec, Invalid> {
    match non_empty(name) {
        Some(name) => catalogue.reader(name).map(|reader| reader.spec()).ok_or_else(|| {
            invalid(
                "readerName",
                format!("there is no reader named {name:?}; GET /api/conversion/reader/list lists them"),
            )
        }),
        None => match default_format {
            Some(format) => catalogue.reader_for_format(format).ok_or_else(|| {
                invalid(
                    "readerName",
                    format!("no reader reads {} datasets; name one", shown_format(format)),
                )
            }),
            None => Err(invalid("readerName", "required")),
        },
    }
}

fn resolve_writer(
    catalogue: &Catalogue,
    name: Option<&str>,
    default_format: Option<&str>,
) -> Result<&'static WriterSpec, Invalid> {
    match non_empty(name) {
        Some(name) => catalogue.writer(name).map(|writer| writer.spec()).ok_or_else(|| {
            invalid(
                "writerName",
                format!("there is no writer named {name:?}; GET /api/conversion/writer/list lists them"),
            )
        }),
        None => match default_format {
            Some(format) => catalogue.writer_for_format(format).ok_or_else(|| {
                invalid(
                    "writerName",
                    format!("no writer writes {} datasets; name one", shown_format(format)),
                )
            }),
            None => Err(invalid("writerName", "required")),
        },
    }
}

fn shown_format(format: &str) -> &str {
    if format.is_empty() {
        "unknown-format"
    } else {
        format
    }
}

fn non_empty(raw: Option<&str>) -> Option<&str> {
    raw.map(str::trim).filter(|raw| !raw.is_empty())
}

/// Parameters as the format library takes them: text values. Numbers and booleans are given
/// raw, a list of texts as a comma-separated list (the library's `StringList`), anything else
/// as JSON text (docs/conversion.md#the-request). A `null` value is the same as leaving the
/// parameter out.
fn parameters(
    field: &str,
    raw: Option<&[ParameterValueDto]>,
) -> Result<Vec<(String, String)>, Invalid> {
    let raw = raw.unwrap_or_default();
    if raw.len() > limits::TRANSFER_PARAMETERS_MAX {
        return Err(invalid(
            field,
            format!("at most {} parameters", limits::TRANSFER_PARAMETERS_MAX),
        ));
    }
    let mut out = Vec::with_capacity(raw.len());
    for (index, parameter) in raw.iter().enumerate() {
        let name = parameter.name.trim();
        if name.is_empty() {
            return Err(invalid(format!("{field}[{index}].name"), "required"));
        }
        if out
            .iter()
            .any(|(seen, _): &(String, String)| seen.eq_ignore_ascii_case(name))
        {
            return Err(invalid(
                format!("{field}[{index}].name"),
                format!("{name} is given twice"),
            ));
        }
        let value = match &parameter.value {
            serde_json::Value::Null => continue,
            serde_json::Value::String(text) => text.clone(),
            serde_json::Value::Number(number) => number.to_string(),
            serde_json::Value::Bool(flag) => flag.to_string(),
            serde_json::Value::Array(items) if items.iter().all(is_listable) => items
                .iter()
                .map(|item| match item {
                    serde_json::Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(","),
            other => other.to_string(),
        };
        out.push((name.to_owned(), value));
    }
    Ok(out)
}

fn is_listable(item: &serde_json::Value) -> bool {
    match item {
        serde_json::Value::String(text) => !text.contains(','),
        serde_json::Value::Number(_) | serde_json::Value::Bool(_) => true,
        _ => false,
    }
}

/// Parses transformations as clients send them (`{"type": "CrsTransformation", ...}`, type
/// and property names in any case) and checks that they can run.
pub(crate) fn parse_transformations(
    raw: &[serde_json::Value],
) -> Result<Vec<Transformation>, Invalid> {
    let mut parsed = Vec::with_capacity(raw.len());
    for (index, value) in raw.iter().enumerate() {
        let transformation = Transformation::from_json(value)
            .map_err(|error| invalid(format!("transformations[{index}]"), error.to_string()))?;
        basin_formats::transform::validate(std::slice::from_ref(&transformation))
            .map_err(|error| invalid(format!("transformations[{index}]"), error.to_string()))?;
        parsed.push(transformation);
    }
    Ok(parsed)
}

/// Checks the job resources of a request against the configured limits and machine types.
pub(crate) fn resources(
    request: &TransferRequest,
    config: &TransfersConfig,
) -> Result<Resources, Invalid> {
    let memory_mb = match request.memory_request_mb {
        None => config.memory_mb_default,
        Some(memory) => whole_multiple_of_1024(memory).ok_or_else(|| {
            invalid(
                "memoryRequestMb",
                "must be a positive multiple of 1024 (e.g. 4096, 8192, 16384)",
            )
        })?,
    };
    let cpu_cores = match request.cpu_cores_request {
        None => config.cpu_cores_default,
        Some(cores) if cores.is_finite() && cores > 0.0 => cores,
        Some(_) => {
            return Err(invalid(
                "cpuCoresRequest",
                "must be a positive number of cores",
            ));
        }
    };
    let storage_gb = match request.storage_size_gb {
        None => None,
        Some(size) if size.is_finite() && size > 0.0 => Some(size),
        Some(_) => return Err(invalid("storageSizeGb", "must be a positive number of GB")),
    };
    let mut labels = labels(request.required_labels.as_deref())?;
    let node_size = match non_empty(request.node_size.as_deref()) {
        Some(name) => Some(fit_node(
            config,
            name,
            memory_mb,
            cpu_cores,
            storage_gb,
            &mut labels,
        )?),
        None => {
            fit_defaults(config, memory_mb, cpu_cores, storage_gb)?;
            None
        }
    };
    Ok(Resources {
        memory_mb,
        cpu_cores,
        storage_gb,
        node_size,
        labels,
    })
}

/// Checks the request against machine type `name` and adds its family label.
fn fit_node(
    config: &TransfersConfig,
    name: &str,
    memory_mb: u64,
    cpu_cores: f64,
    storage_gb: Option<f64>,
    labels: &mut Vec<String>,
) -> Result<String, Invalid> {
    let node = config
        .node_sizes
        .iter()
        .find(|node| node.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            let names: Vec<&str> = config
                .node_sizes
                .iter()
                .map(|node| node.name.as_str())
                .collect();
            invalid(
                "nodeSize",
                format!(
                    "{name:?} is not a machine type; machine types: {}",
                    names.join(", ")
                ),
            )
        })?;
    if memory_mb > node.memory_mb {
        return Err(invalid(
            "memoryRequestMb",
            format!(
                "{memory_mb} MB exceeds the {} MB of machine type {}",
                node.memory_mb, node.name
            ),
        ));
    }
    if cpu_cores > node.cpu_cores {
        return Err(invalid(
            "cpuCoresRequest",
            format!(
                "{cpu_cores} cores exceed the {} cores of machine type {}",
                node.cpu_cores, node.name
            ),
        ));
    }
    if let Some(size) = storage_gb.filter(|size| *size > node.storage_gb) {
        return Err(invalid(
            "storageSizeGb",
            format!(
                "{size} GB exceeds the {} GB of machine type {}",
                node.storage_gb, node.name
            ),
        ));
    }
    let family = format!("{VM_SIZE_LABEL}={}", node.family);
    if let Some(other) = labels
        .iter()
        .find(|label| label_key(label) == VM_SIZE_LABEL && **label != family)
    {
        return Err(invalid(
            "requiredLabels",
            format!("{other} contradicts nodeSize {} ({family})", node.name),
        ));
    }
    if !labels.contains(&family) {
        labels.push(family);
    }
    Ok(node.name.clone())
}

/// Checks a request without a machine type against the configured maximums.
fn fit_defaults(
    config: &TransfersConfig,
    memory_mb: u64,
    cpu_cores: f64,
    storage_gb: Option<f64>,
) -> Result<(), Invalid> {
    if memory_mb > config.memory_mb_max {
        return Err(invalid(
            "memoryRequestMb",
            format!(
                "{memory_mb} MB exceeds the limit of {} MB; name a larger nodeSize",
                config.memory_mb_max
            ),
        ));
    }
    if cpu_cores > config.cpu_cores_max {
        return Err(invalid(
            "cpuCoresRequest",
            format!(
                "{cpu_cores} cores exceed the limit of {} cores",
                config.cpu_cores_max
            ),
        ));
    }
    if let Some(size) = storage_gb.filter(|size| *size > config.storage_gb_max) {
        return Err(invalid(
            "storageSizeGb",
            format!(
                "{size} GB exceeds the limit of {} GB",
                config.storage_gb_max
            ),
        ));
    }
    Ok(())
}

/// The node label naming a machine type's VM family (`nodeSize`, docs/conversion.md#the-request).
pub(crate) const VM_SIZE_LABEL: &str = "svc.platform/vmsize";

fn whole_multiple_of_1024(memory: f64) -> Option<u64> {
    if !memory.is_finite() || memory <= 0.0 || memory.fract() != 0.0 || memory > 1e12 {
        return None;
    }
    // Checked above: a positive whole number below 2^40, exact in both types.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "checked above"
    )]
    let memory = memory as u64;
    memory.is_multiple_of(1024).then_some(memory)
}

fn label_key(label: &str) -> &str {
    label.split_once('=').map_or(label, |(key, _)| key)
}

/// `requiredLabels`: each `key=value` (or a bare `key`), in the syntax Kubernetes accepts for
/// node labels, so that a label reaches a scheduler unchanged.
fn labels(raw: Option<&[String]>) -> Result<Vec<String>, Invalid> {
    let raw = raw.unwrap_or_default();
    if raw.len() > limits::TRANSFER_LABELS_MAX {
        return Err(invalid(
            "requiredLabels",
            format!("at most {} labels", limits::TRANSFER_LABELS_MAX),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for (index, label) in raw.iter().enumerate() {
        let label = label.trim();
        let (key, value) = label.split_once('=').unwrap_or((label, ""));
        let (prefix, name) = match key.rsplit_once('/') {
            Some((prefix, name)) => (Some(prefix), name),
            None => (None, key),
        };
        let prefix_ok = prefix.is_none_or(|prefix| {
            !prefix.is_empty()
                && prefix.len() <= 253
                && prefix
                    .split('.')
                    .all(|part| !part.is_empty() && is_label_word(part, false))
        });
        if !prefix_ok || name.is_empty() || !is_label_word(name, true) || !is_label_value(value) {
            return Err(invalid(
                format!("requiredLabels[{index}]"),
                format!("{label:?} is not a node label (key=value, as Kubernetes writes them)"),
            ));
        }
        if !out.iter().any(|seen| seen == label) {
            out.push(label.to_owned());
        }
    }
    Ok(out)
}

fn is_label_word(word: &str, allow_inner_punctuation: bool) -> bool {
    let bytes = word.as_bytes();
    let edges_ok = bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric);
    edges_ok
        && word.len() <= 63
        && bytes.iter().all(|byte| {
            byte.is_ascii_alphanumeric()
                || *byte == b'-'
                || (allow_inner_punctuation && (*byte == b'_' || *byte == b'.'))
        })
}

fn is_label_value(value: &str) -> bool {
    value.is_empty() || is_label_word(value, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: serde_json::Value) -> TransferRequest {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn memory_must_be_a_positive_multiple_of_1024() {
        let config = TransfersConfig::default();
        for bad in [0.0, -1024.0, 1000.0, 4096.5, f64::NAN] {
            let error = resources(
                &TransferRequest {
                    memory_request_mb: Some(bad),
                    ..TransferRequest::default()
                },
                &config,
            )
            .unwrap_err();
            assert_eq!(error.field, "memoryRequestMb", "{bad}");
        }
        let ok = resources(
            &request(serde_json::json!({"memoryRequestMb": 8192})),
            &config,
        )
        .unwrap();
        assert_eq!(ok.memory_mb, 8192);
        assert_eq!(
            resources(&TransferRequest::default(), &config)
                .unwrap()
                .memory_mb,
            4096
        );
    }

    #[test]
    fn a_node_size_adds_its_family_label_and_bounds_the_request() {
        let config = TransfersConfig::default();
        let ok = resources(
            &request(serde_json::json!({"nodeSize": "medium", "memoryRequestMb": 16384, "requiredLabels": ["pool=gpu"]})),
            &config,
        )
        .unwrap();
        assert_eq!(ok.node_size.as_deref(), Some("Medium"));
        assert_eq!(ok.labels, vec!["pool=gpu", "svc.platform/vmsize=standard"]);
        let over = resources(
            &request(serde_json::json!({"nodeSize": "Medium", "cpuCoresRequest": 8})),
            &config,
        )
        .unwrap_err();
        assert_eq!(over.field, "cpuCoresRequest");
        assert!(over.message.contains("Medium"), "{}", over.message);
        let unknown =
            resources(&request(serde_json::json!({"nodeSize": "Huge"})), &config).unwrap_err();
        assert_eq!(unknown.field, "nodeSize");
    }

    #[test]
    fn labels_follow_kubernetes_syntax() {
        assert!(
            labels(Some(&[
                "a=b".into(),
                "example.com/zone=west-1".into(),
                "gpu".into()
            ]))
            .is_ok()
        );
        for bad in ["=x", "a=b c", "-a=b", "a/=b", "a=b\0", &"k".repeat(64)] {
            assert!(labels(Some(&[bad.to_owned()])).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn parameter_values_become_text() {
        let raw: Vec<ParameterValueDto> = serde_json::from_value(serde_json::json!([
            {"name": "SRID", "value": 25832},
            {"name": "AllowedItemNames", "value": ["H", "U"]},
            {"name": "Flag", "value": true},
            {"name": "Gone", "value": null},
            {"name": "Odd", "value": {"a": 1}}
        ]))
        .unwrap();
        let text = parameters("readerParameters", Some(&raw)).unwrap();
        assert_eq!(
            text,
            vec![
                ("SRID".to_owned(), "25832".to_owned()),
                ("AllowedItemNames".to_owned(), "H,U".to_owned()),
                ("Flag".to_owned(), "true".to_owned()),
                ("Odd".to_owned(), "{\"a\":1}".to_owned()),
            ]
        );
        let twice: Vec<ParameterValueDto> = serde_json::from_value(
            serde_json::json!([{"name": "a", "value": 1}, {"name": "A", "value": 2}]),
        )
        .unwrap();
        assert_eq!(
            parameters("readerParameters", Some(&twice))
                .unwrap_err()
                .field,
            "readerParameters[1].name"
        );
    }
}
