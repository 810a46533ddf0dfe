//! Short forms of ids: what tells an id from its neighbours in the store, and the whole id a
//! person's unique prefix names.

use super::{LONG_PARTICIPANT, SHORT_PARTICIPANT};
use crate::Core;
use crate::error::{AccError, AccResult};
use crate::ids;

impl Core {
    /// The whole id a person gave a unique prefix of: `text` is an id of `kind` (`message`,
    /// `claim`, `session`), with or without its `<kind>_`, or the start of one with at least
    /// [`ids::MIN_PREFIX`] characters after it. A whole id, or a prefix nothing matches, comes
    /// back as given (the command then reports it not found); a prefix that is too short or
    /// matches several ids is refused, the candidates listed.
    pub fn expand_id(&mut self, kind: &str, text: &str) -> AccResult<String> {
        let head = format!("{kind}_");
        // Another kind's id is left as it is, for the command to refuse by name.
        let other = ["message_", "claim_", "session_", "gen_", "cm_"]
            .iter()
            .any(|h| *h != head && text.starts_with(h));
        if other {
            return Ok(text.to_string());
        }
        let prefix = if text.starts_with(&head) {
            text.to_string()
        } else {
            format!("{head}{text}")
        };
        let random = prefix.len() - head.len();
        if random >= ids::ID_RANDOM_LEN {
            return Ok(prefix);
        }
        if random < ids::MIN_PREFIX {
            return Err(AccError::usage(format!(
                "`{text}` is too short to name a {kind}: give at least {} characters of its id after `{head}`",
                ids::MIN_PREFIX
            )));
        }
        let Some(store) = self.store_for_read() else {
            return Ok(prefix);
        };
        let found = store.read(|r| Ok::<_, AccError>(r.ids_with_prefix(kind, &prefix, 11)?))?;
        match found.as_slice() {
            [] => Ok(prefix),
            [one] => Ok(one.clone()),
            many => Err(AccError::usage(format!(
                "`{text}` names more than one {kind}: {}{}; give more of the id",
                many.iter().take(10).cloned().collect::<Vec<_>>().join(", "),
                if many.len() > 10 { ", …" } else { "" }
            ))),
        }
    }

    /// Each of `ids` shortened to what tells it from every other id of its kind in the store:
    /// its `<kind>_` and at least [`ids::MIN_PREFIX`] characters, more where a neighbour shares
    /// them; [`Core::expand_id`] takes the short form back. An id this cannot read (no store,
    /// another kind) keeps its whole length. A read: two probes of the id's index for each of a
    /// few ids, one scan of the index for many.
    pub fn short_ids<'a>(
        &mut self,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> AccResult<std::collections::HashMap<String, String>> {
        /// Above this many ids of one kind, the kind's whole index is read once instead.
        const PROBES_UP_TO: usize = 64;
        let mut short = std::collections::HashMap::new();
        let Some(store) = self.store_for_read() else {
            return Ok(short);
        };
        let mut by_kind: std::collections::BTreeMap<&str, Vec<&str>> =
            std::collections::BTreeMap::new();
        for id in ids {
            if let Some((kind, _)) = id.split_once('_')
                && matches!(kind, "message" | "claim" | "session")
            {
                by_kind.entry(kind).or_default().push(id);
            }
        }
        store.read(|r| {
            for (kind, mut wanted) in by_kind {
                wanted.sort_unstable();
                wanted.dedup();
                let every = if wanted.len() > PROBES_UP_TO {
                    Some(r.all_ids(kind)?)
                } else {
                    None
                };
                for id in wanted {
                    let (before, after) = match &every {
                        Some(every) => {
                            let at = every.partition_point(|other| other.as_str() < id);
                            let before = at.checked_sub(1).and_then(|i| every.get(i)).cloned();
                            let after = every
                                .get(at)
                                .filter(|other| other.as_str() != id)
                                .or_else(|| every.get(at + 1))
                                .cloned();
                            (before, after)
                        }
                        None => r.id_neighbours(kind, id)?,
                    };
                    short.insert(id.to_string(), shorten(kind, id, before, after));
                }
            }
            Ok::<_, AccError>(())
        })?;
        Ok(short)
    }

    /// Participants' ids as a person reads them: an id longer than [`LONG_PARTICIPANT`]
    /// characters (a hooked conversation's, about 48) cut to what tells it from its neighbours
    /// in id order, and at least [`SHORT_PARTICIPANT`] characters (the client's name and a few
    /// of the conversation's); shorter ids stay whole. `--to` takes the short form back as a
    /// unique prefix. A read of the participants' index.
    pub fn short_participants(&mut self) -> AccResult<std::collections::HashMap<String, String>> {
        let mut short = std::collections::HashMap::new();
        let Some(store) = self.store_for_read() else {
            return Ok(short);
        };
        let ids = store.read(|r| Ok::<_, AccError>(r.all_ids("participant")?))?;
        for (at, id) in ids.iter().enumerate() {
            if id.len() <= LONG_PARTICIPANT {
                continue;
            }
            let before = at.checked_sub(1).and_then(|i| ids.get(i));
            let keep = distinct_len(id, before, ids.get(at + 1)).max(SHORT_PARTICIPANT);
            // Portable ids are ASCII: any byte length is a character boundary.
            if let Some(cut) = id.get(..keep).filter(|_| keep < id.len()) {
                short.insert(id.clone(), cut.to_string());
            }
        }
        Ok(short)
    }
}

/// How many leading bytes of `id` tell it from its neighbours in the id order: those it shares
/// with the closer of them, and one more.
fn distinct_len(id: &str, before: Option<&String>, after: Option<&String>) -> usize {
    let shared = |other: Option<&String>| {
        other.map_or(0, |o| {
            o.bytes()
                .zip(id.bytes())
                .take_while(|(a, b)| a == b)
                .count()
        })
    };
    shared(before).max(shared(after)) + 1
}

/// `id` (of `kind`) cut to the characters that tell it from its neighbours in the id order,
/// and at least [`ids::MIN_PREFIX`] of its random part.
fn shorten(kind: &str, id: &str, before: Option<String>, after: Option<String>) -> String {
    let random = id.get(kind.len() + 1..).unwrap_or_default();
    // Characters of the random part the neighbours share, plus one that differs.
    let needed = distinct_len(id, before.as_ref(), after.as_ref()).saturating_sub(kind.len() + 1);
    let keep = needed.max(ids::MIN_PREFIX).min(random.len());
    format!("{kind}_{}", random.get(..keep).unwrap_or(random))
}

#[cfg(test)]
mod short_id_tests {
    use super::shorten;

    #[test]
    fn an_id_keeps_what_tells_it_from_its_neighbours_and_at_least_six_characters() {
        let id = "claim_AbCdEfGhIjKlMnOpQrStUv";
        assert_eq!(shorten("claim", id, None, None), "claim_AbCdEf");
        let close = Some("claim_AbCdEfGhXXXXXXXXXXXXXX".to_string());
        assert_eq!(shorten("claim", id, close, None), "claim_AbCdEfGhI");
        let far = Some("claim_Zzzzzzzzzzzzzzzzzzzzzz".to_string());
        assert_eq!(shorten("claim", id, None, far), "claim_AbCdEf");
    }
}
