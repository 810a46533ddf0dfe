//! Writes sent ahead of their answers on a room (issue 30): a write transaction's inserts whose
//! answers nothing waits for (a send's event, message and receipts) go out as soon as they are
//! made, and their answers are taken with the transaction's next round trip, in order, before
//! that trip's own. A failure among them is the transaction's failure: it is reported by the
//! next round trip (a later statement of an aborted transaction would only say that it is
//! aborted) and the transaction is rolled back, so nothing commits without every answer checked.
//!
//! A deferred request must outlive the call that made it, so it owns what it sends: the
//! client's handle, its text, and its arguments encoded once into the bytes the server receives
//! ([`Encoded`]), which are also what keys an answer read ahead.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use super::Arg;
use crate::{StoreError, StoreResult};

/// An argument encoded for the server: its type and its bytes (`None`: NULL).
#[derive(Debug)]
pub(crate) struct Encoded {
    ty: Type,
    value: Option<bytes::Bytes>,
}

impl Encoded {
    /// The arguments encoded, when each has a type of its own (`None` otherwise: such a
    /// statement is prepared and answered in a round trip of its own).
    pub(crate) fn all(args: &[&dyn Arg]) -> Option<Vec<Self>> {
        args.iter()
            .map(|arg| {
                let ty = arg.pg_type()?;
                let mut value = bytes::BytesMut::new();
                let null = arg.pg().to_sql_checked(&ty, &mut value).ok()?;
                Some(Self {
                    ty,
                    value: matches!(null, IsNull::No).then(|| value.freeze()),
                })
            })
            .collect()
    }

    /// The bytes that identify `sql` with these arguments as the server receives them.
    pub(crate) fn key(sql: &str, encoded: &[Self]) -> Vec<u8> {
        let mut key = sql.as_bytes().to_vec();
        for arg in encoded {
            key.push(0);
            key.extend_from_slice(&arg.ty.oid().to_be_bytes());
            match &arg.value {
                None => key.push(0),
                Some(value) => {
                    key.push(1);
                    key.extend_from_slice(&(value.len() as u64).to_be_bytes());
                    key.extend_from_slice(value);
                }
            }
        }
        key
    }

    /// The arguments as the driver takes them.
    pub(crate) fn typed(encoded: &[Self]) -> Vec<(&(dyn ToSql + Sync), Type)> {
        encoded
            .iter()
            .map(|e| (e as &(dyn ToSql + Sync), e.ty.clone()))
            .collect()
    }
}

impl ToSql for Encoded {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match &self.value {
            None => Ok(IsNull::Yes),
            Some(value) => {
                out.extend_from_slice(value);
                Ok(IsNull::No)
            }
        }
    }

    /// Sent with the type it was encoded for (`query_typed` names it), so any type is its own.
    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

type Answer = Pin<Box<dyn Future<Output = StoreResult<()>> + Send>>;

/// A request sent whose answer is still to be taken.
pub(crate) enum Deferred {
    /// Answered already when it was sent (a connection found closed).
    Done(StoreResult<()>),
    /// Its answer, to be awaited.
    Due(Answer),
}

impl Deferred {
    /// Send `text` with `encoded` on `client` now; its answer is awaited later
    /// ([`Self::answer`]). With `seq`, the statement returns a `seq` that must be that one (a
    /// number the writer worked out under the room's lock, checked).
    pub(crate) fn send(
        client: Arc<tokio_postgres::Client>,
        room: String,
        text: Arc<str>,
        encoded: Vec<Encoded>,
        seq: Option<i64>,
    ) -> Self {
        let mut answer: Answer = Box::pin(async move {
            let rows = client
                .query_typed(&text, &Encoded::typed(&encoded))
                .await
                .map_err(|e| crate::pg::error(&room, &e))?;
            let Some(expected) = seq else {
                return Ok(());
            };
            let got = rows
                .first()
                .map(|row| super::Row::Pg(row).get::<i64>(0))
                .transpose()?;
            if got == Some(expected) {
                Ok(())
            } else {
                Err(StoreError::internal(format!(
                    "the room at {room} numbered a row {got:?} where its writer, holding the lock, expected {expected}; nothing was committed"
                )))
            }
        });
        // Polled once, the request is queued on the connection behind every one before it.
        match answer
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(done) => Self::Done(done),
            Poll::Pending => Self::Due(answer),
        }
    }

    /// The answer (awaited in the order the requests were sent, as the server answers them).
    pub(crate) async fn answer(self) -> StoreResult<()> {
        match self {
            Self::Done(done) => done,
            Self::Due(answer) => answer.await,
        }
    }
}
