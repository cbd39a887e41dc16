//! Basin's `statistics` of an area query: per step, over the cells or elements a polygon
//! holds that have a value. `min`, `max`, `mean` (each cell counts once), `weighted-mean`
//! (each cell by its horizontal area, as a volume or mass balance needs), `count` (cells with
//! a value) and percentiles `p0` to `p100` (linear between the two nearest ranks, NumPy's
//! default). No value at all gives NaN (null), except `count`, which is 0.

use crate::error::{EdrError, EdrResult};

/// Most statistics one query may ask for.
const STATISTICS_MAX: usize = 32;

/// One statistic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Statistic {
    /// Smallest value.
    Min,
    /// Largest value.
    Max,
    /// Mean, each cell once.
    Mean,
    /// Mean weighted by each cell's area.
    WeightedMean,
    /// Cells with a value.
    Count,
    /// A percentile, 0 to 100.
    Percentile(f64),
}

impl Statistic {
    /// Parses a comma-separated list, each once, in the order given.
    pub fn parse_list(text: &str) -> EdrResult<Vec<Self>> {
        let mut list: Vec<Self> = Vec::new();
        for name in text.split(',').map(str::trim) {
            let statistic = Self::parse(name)?;
            if !list.contains(&statistic) {
                list.push(statistic);
            }
        }
        if list.len() > STATISTICS_MAX {
            return Err(EdrError::invalid(
                "statistics",
                format!("at most {STATISTICS_MAX} statistics may be asked at once"),
            ));
        }
        Ok(list)
    }

    fn parse(name: &str) -> EdrResult<Self> {
        let lower = name.to_ascii_lowercase();
        let statistic = match lower.as_str() {
            "min" => Self::Min,
            "max" => Self::Max,
            "mean" => Self::Mean,
            "weighted-mean" | "area-weighted-mean" => Self::WeightedMean,
            "count" => Self::Count,
            _ => {
                let percent = lower
                    .strip_prefix('p')
                    .and_then(|digits| digits.parse::<f64>().ok())
                    .filter(|percent| (0.0..=100.0).contains(percent));
                match percent {
                    Some(percent) => Self::Percentile(percent),
                    None => {
                        return Err(EdrError::invalid(
                            "statistics",
                            format!(
                                "{name:?} is not a statistic; take min, max, mean, \
                                 weighted-mean, count or p0 to p100 (p50 is the median)"
                            ),
                        ));
                    }
                }
            }
        };
        Ok(statistic)
    }

    /// The name answers use (`p90`, `weighted-mean`).
    pub fn name(&self) -> String {
        match self {
            Self::Min => "min".to_owned(),
            Self::Max => "max".to_owned(),
            Self::Mean => "mean".to_owned(),
            Self::WeightedMean => "weighted-mean".to_owned(),
            Self::Count => "count".to_owned(),
            Self::Percentile(percent) => format!("p{percent}"),
        }
    }

    /// The statistic of `sample` (values with a value, each with its weight).
    pub fn over(&self, mut sample: Vec<(f64, f64)>) -> f64 {
        if sample.is_empty() {
            return if *self == Self::Count { 0.0 } else { f64::NAN };
        }
        let count = sample.len() as f64;
        match self {
            Self::Min => sample
                .iter()
                .map(|(value, _)| *value)
                .fold(f64::INFINITY, f64::min),
            Self::Max => sample
                .iter()
                .map(|(value, _)| *value)
                .fold(f64::NEG_INFINITY, f64::max),
            Self::Mean => sample.iter().map(|(value, _)| value).sum::<f64>() / count,
            Self::WeightedMean => {
                let weight: f64 = sample.iter().map(|(_, weight)| weight).sum();
                if weight > 0.0 {
                    sample
                        .iter()
                        .map(|(value, weight)| value * weight)
                        .sum::<f64>()
                        / weight
                } else {
                    f64::NAN
                }
            }
            Self::Count => count,
            Self::Percentile(percent) => {
                sample.sort_by(|a, b| a.0.total_cmp(&b.0));
                let rank = percent / 100.0 * (count - 1.0);
                let below = rank.floor() as usize;
                let above = rank.ceil() as usize;
                let (low, high) = (
                    sample.get(below).map_or(f64::NAN, |v| v.0),
                    sample.get(above).map_or(f64::NAN, |v| v.0),
                );
                let fraction = rank - rank.floor();
                // NumPy's linear method, written as it writes it: from the nearer end.
                if fraction >= 0.5 {
                    high - (high - low) * (1.0 - fraction)
                } else {
                    low + (high - low) * fraction
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(values: &[f64]) -> Vec<(f64, f64)> {
        values.iter().map(|value| (*value, 1.0)).collect()
    }

    #[test]
    fn statistics_follow_numpy() -> EdrResult<()> {
        let values = [4.0, 1.0, 3.0, 2.0];
        let list = Statistic::parse_list("min,max,mean,count,p50,p25,P100,p0")?;
        let got: Vec<f64> = list.iter().map(|s| s.over(sample(&values))).collect();
        // numpy.percentile([4, 1, 3, 2], [50, 25, 100, 0]) = 2.5, 1.75, 4, 1
        assert_eq!(got, [1.0, 4.0, 2.5, 4.0, 2.5, 1.75, 4.0, 1.0]);
        let weighted = Statistic::WeightedMean.over(vec![(1.0, 3.0), (5.0, 1.0)]);
        assert_eq!(weighted, 2.0);
        assert!(Statistic::Mean.over(Vec::new()).is_nan());
        assert_eq!(Statistic::Count.over(Vec::new()), 0.0);
        Ok(())
    }

    #[test]
    fn unknown_statistics_name_the_parameter() {
        for text in ["median", "p101", "p-1", "", "mean,", "px"] {
            let error = Statistic::parse_list(text).err();
            assert!(
                matches!(
                    error,
                    Some(EdrError::Invalid {
                        parameter: "statistics",
                        ..
                    })
                ),
                "{text:?}: {error:?}"
            );
        }
    }
}
