//! Building and validating the rate adaptive shapers of RFC 2963 (`shaper = { type =
//! "srras" | "trras" | "g_srras" | "g_trras", ... }`, docs/ras.md). One entry point,
//! [`ras_shaper`], used by the conditioner builder and usable by anything else that needs
//! a RAS from its scenario table (trace-driven replay).

use super::build::{err, quoted};
use super::schema_af::{ShaperSpec, SrrasSpec, TrrasSpec};
use crate::conditioner::{Meter, Ras, RasConfig, RasKind};
use crate::params::{ConfigError, KeyPath};
use crate::time::Rate;

type Result<T> = std::result::Result<T, ConfigError>;

/// The RAS of `spec` (None when `spec` is not a RAS), for a shaper whose output link runs
/// at `line_rate` (the bound of the MIR and its default; None when there is no link, in
/// trace replay: the MIR must then be given) and whose conditioner has
/// `meter` (a green RAS needs the matching three colour marker). `path` is the shaper
/// table's key path, `meter_path` the meter's.
pub fn ras_shaper(
    spec: &ShaperSpec,
    line_rate: Option<Rate>,
    meter: Option<&Meter>,
    path: &KeyPath,
    meter_path: &KeyPath,
) -> Result<Option<Ras>> {
    let mir = match spec {
        ShaperSpec::TokenBucket(_) => return Ok(None),
        ShaperSpec::Srras(s) | ShaperSpec::GSrras(s) => s.mir,
        ShaperSpec::Trras(s) | ShaperSpec::GTrras(s) => s.mir,
    };
    let Some(default_mir) = mir.or(line_rate) else {
        return err(
            path.key("mir"),
            "(missing)",
            "without an output link (trace replay) there is no line rate for the MIR to default to (RFC 2963 section 2.2): give mir",
        );
    };
    let cfg = match spec {
        ShaperSpec::TokenBucket(_) => unreachable!(),
        ShaperSpec::Srras(s) => sr_config(s, false, default_mir),
        ShaperSpec::GSrras(s) => sr_config(s, true, default_mir),
        ShaperSpec::Trras(s) => tr_config(s, false, default_mir),
        ShaperSpec::GTrras(s) => tr_config(s, true, default_mir),
    };
    if let (None, Some(line_rate)) = (mir, line_rate) {
        // The MIR defaults to the line rate ("A typical value for the MIR would be the
        // line rate of the output link of the shaper", 2.2): a CIR or PIR above it is the
        // rate at fault.
        for (key, r) in [("cir", Some(cfg.cir)), ("pir", cfg.pir)] {
            if let Some(r) = r.filter(|r| *r > line_rate) {
                return err(
                    path.key(key),
                    quoted(&r.to_string()),
                    format!(
                        "the {} must not exceed the MIR, which defaults to the line rate of the shaper's output link ({line_rate})",
                        key.to_uppercase()
                    ),
                );
            }
        }
    }
    if cfg.green {
        check_green_meter(&cfg, meter, path, meter_path)?;
    }
    Ras::new(&cfg, line_rate)
        .map(Some)
        .map_err(|e| ConfigError::new(path.key(e.field), Some(e.value), e.rule))
}

fn sr_config(s: &SrrasSpec, green: bool, mir: Rate) -> RasConfig {
    RasConfig {
        kind: RasKind::Sr,
        green,
        cir: s.cir,
        pir: None,
        mir,
        cir_th: s.cir_th,
        pir_th: None,
        mir_th: s.mir_th,
        buffer: s.buffer,
        k: s.k,
    }
}

fn tr_config(s: &TrrasSpec, green: bool, mir: Rate) -> RasConfig {
    RasConfig {
        kind: RasKind::Tr,
        green,
        cir: s.cir,
        pir: Some(s.pir),
        mir,
        cir_th: s.cir_th,
        pir_th: Some(s.pir_th),
        mir_th: s.mir_th,
        buffer: s.buffer,
        k: s.k,
    }
}

/// Section 3: a G-srRAS computes T2 from the token state of the srTCM downstream (3.3), a
/// G-trRAS from the trTCM's (3.5); the meter is the one of the same conditioner.
fn check_green_meter(cfg: &RasConfig, meter: Option<&Meter>, path: &KeyPath, meter_path: &KeyPath) -> Result<()> {
    let (want, section) = match cfg.kind {
        RasKind::Sr => ("srtcm", "3.3"),
        RasKind::Tr => ("trtcm", "3.5"),
    };
    let ok = matches!(
        (cfg.kind, meter),
        (RasKind::Sr, Some(Meter::Srtcm(_))) | (RasKind::Tr, Some(Meter::Trtcm(_)))
    );
    if ok {
        return Ok(());
    }
    let name = cfg.name();
    let rule = format!(
        "a {name} releases packets by the token state of the {} downstream (RFC 2963 section {section}): \
         the conditioner needs meter = {{ type = \"{want}\", ... }}",
        if want == "srtcm" { "srTCM" } else { "trTCM" }
    );
    match meter {
        None => Err(ConfigError::new(path.key("type"), Some(quoted(type_tag(cfg))), rule)),
        Some(_) => Err(ConfigError::new(meter_path.key("type"), None, rule)),
    }
}

fn type_tag(cfg: &RasConfig) -> &'static str {
    match (cfg.kind, cfg.green) {
        (RasKind::Sr, false) => "srras",
        (RasKind::Tr, false) => "trras",
        (RasKind::Sr, true) => "g_srras",
        (RasKind::Tr, true) => "g_trras",
    }
}
