//! Binding a session to a live delivery adapter (after the adapter verifies the endpoint and
//! the evidence admits it), and unbinding.

use super::*;

impl Delivery {
    /// Publish (or replace) the caller session's binding to an adapter, after the adapter
    /// verified the endpoint. The binding is tied to the current generation.
    pub fn bind(
        &mut self,
        core: &mut Core,
        caller: &Caller,
        adapter_id: &str,
        live_policy: LivePolicy,
        endpoint: &Value,
    ) -> AccResult<BindingRow> {
        let session = core.caller_session(caller)?;
        let Some(adapter) = self.adapter(adapter_id)? else {
            let known: Vec<String> = self
                .plugins()?
                .adapters
                .iter()
                .map(|a| a.adapter_id.clone())
                .collect();
            return Err(AccError::new(
                ErrorCode::InvalidData,
                format!(
                    "no adapter `{adapter_id}` is loaded (loaded: {}); see acc adapters",
                    if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        };
        let live_policy = match &self.consent_override {
            Some(_) => live_policy,
            None => consented_policy(&*self.records, &adapter, live_policy, endpoint)?,
        };
        let answer = self.handshake(
            &adapter,
            &session.session_id,
            session.generation,
            &session.participant_id,
            endpoint,
        )?;
        // A live binding that evidence can never admit would only ever fall back: refuse it now,
        // with the reason, rather than at every message.
        if answer.modes.iter().any(|m| m == "live")
            && let Err(code) = self.admit(&adapter, &answer.client_version)
        {
            return Err(AccError::new(
                ErrorCode::InvalidData,
                format!(
                    "{code}: live delivery through `{adapter_id}` is not admitted for client version {} on {}: {}; nothing was bound, and messages reach this session durably",
                    answer.client_version,
                    acc_clients::platform(),
                    code.hint()
                ),
            ));
        }
        let now = core.now();
        let binding = BindingRow {
            session_id: session.session_id.clone(),
            generation: session.generation,
            adapter_id: adapter.adapter_id.clone(),
            client_version: answer.client_version,
            modes: answer.modes,
            live_policy,
            endpoint_ref: answer.endpoint_ref,
            endpoint: endpoint.clone(),
            lease_until: now + (answer.lease_seconds as i64) * 1000,
            created_at: now,
        };
        core.put_binding(caller, &binding)?;
        Ok(binding)
    }

    /// Remove the caller session's binding to an adapter (or all of them).
    pub fn unbind(
        &mut self,
        core: &mut Core,
        caller: &Caller,
        adapter_id: Option<&str>,
    ) -> AccResult<usize> {
        core.drop_bindings(caller, adapter_id)
    }
}
