//! The three resources: the room's status, the caller's inbox, and the protocol's own text.

use super::*;

impl Server {
    pub(super) fn read_resource(
        &mut self,
        era: Era,
        params: &Map<String, Value>,
    ) -> Result<Value, RpcError> {
        let uri = required_str(params, "uri", "resources/read")?;
        let text = match uri {
            "acc://snapshot" => self.core().and_then(|core| {
                let report = core.status(true)?;
                let messages = core.all_messages()?;
                Ok(views::snapshot(
                    &report,
                    &messages,
                    core.now(),
                    &core.workspace.id,
                ))
            }),
            "acc://roster" => self
                .core()
                .map(|core| core.status(false))
                .and_then(|r| r)
                .map(|report| views::roster(&report)),
            "acc://inbox" => self.with_session(|app, caller| {
                Ok(views::inbox_page(&app.core.inbox(caller, None, None)?))
            }),
            _ => {
                let code = if era == Era::Modern {
                    Code::INVALID_PARAMS
                } else {
                    Code::RESOURCE_NOT_FOUND
                };
                return Err((
                    code,
                    format!("resource not found: {uri}"),
                    Some(json(&wire::UnknownResource { uri })),
                ));
            }
        };
        match text {
            Ok(value) => Ok(json(&wire::ResourceContents {
                contents: [wire::ResourceText {
                    uri,
                    mime_type: "application/json",
                    text: wire::model_text(&value),
                }],
            })),
            Err(error) => Err((
                Code::INTERNAL_ERROR,
                format!("{}: {}", error.code, error.message),
                Some(error_value(&error)),
            )),
        }
    }
}
