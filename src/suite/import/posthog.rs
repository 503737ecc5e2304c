//! PostHog MCP analytics exports: `$mcp_tool_call` events (`{event, timestamp, distinct_id,
//! properties: {$session_id, $mcp_tool_name, $mcp_tool_description, $mcp_parameters,
//! $mcp_is_error, …}}`), as a JSON export (a list of events, or an API page `{results: […]}`),
//! one event per line, or a CSV export with a header (a `properties` column of JSON, or one
//! `properties.KEY` column per property).
//!
//! These are server-side logs: each event is a call the server received, with no prompt and no
//! list of offered tools. `watch` reads them; `suite import` skips them (nothing to propose).

use serde_json::{Map, Value};

use super::{Got, Run};

/// The event of a tool call.
pub const TOOL_CALL: &str = "$mcp_tool_call";

pub(super) fn looks_like(v: &Value) -> bool {
    v.get("event")
        .and_then(Value::as_str)
        .is_some_and(|e| e.starts_with("$mcp_"))
        || v.get("results").and_then(Value::as_array).is_some_and(|r| {
            r.first()
                .is_some_and(|e| e.get("event").is_some() && e.get("properties").is_some())
        })
}

pub(super) fn record(v: &Value) -> Result<Vec<(String, Got)>, String> {
    if let Some(results) = v.get("results") {
        let list = results
            .as_array()
            .ok_or_else(|| "/results: expected a list of events".to_string())?;
        return Ok(list
            .iter()
            .enumerate()
            .map(|(i, e)| {
                (
                    format!("/results/{i}"),
                    event(e).unwrap_or_else(Got::Malformed),
                )
            })
            .collect());
    }
    Ok(vec![("".into(), event(v)?)])
}

fn event(v: &Value) -> Result<Got, String> {
    let name = v
        .get("event")
        .and_then(Value::as_str)
        .ok_or_else(|| "expected a PostHog event {event, properties}".to_string())?;
    if name != TOOL_CALL {
        return Ok(Got::Skip(format!("event {name:?}, not {TOOL_CALL}")));
    }
    let props = properties(v)?;
    let tool = props
        .get("$mcp_tool_name")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{TOOL_CALL}: expected properties.$mcp_tool_name, a string"))?;
    let arguments = match props.get("$mcp_parameters") {
        Some(Value::Object(m)) => Some(m.clone()),
        Some(Value::String(s)) => serde_json::from_str::<Value>(s)
            .ok()
            .and_then(|v| v.as_object().cloned()),
        _ => None,
    };
    let error = match props.get("$mcp_is_error") {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s == "true",
        _ => false,
    };
    let run = Run {
        name: tool.to_string(),
        error,
        call: true,
        arguments,
        description: props
            .get("$mcp_tool_description")
            .and_then(Value::as_str)
            .map(String::from),
    };
    Ok(Got::Ran(
        run,
        "a server-side tool call: no prompt to propose a case from".into(),
    ))
}

/// An event's properties: an object, or (CSV) a string of one.
pub(super) fn properties(v: &Value) -> Result<Map<String, Value>, String> {
    match v.get("properties") {
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err("properties: expected a JSON object".into()),
        },
        None => Ok(Map::new()),
        Some(_) => Err("properties: expected an object".into()),
    }
}

/// A CSV export's rows as events, each with its line: `None` when the text is not a CSV with an
/// `event` column. A `properties` column holds JSON; `properties.KEY` columns are gathered.
pub(super) fn csv_rows(text: &str) -> Option<Vec<(usize, Result<Value, String>)>> {
    let first = text.lines().next()?;
    if first.trim_start().starts_with(['{', '['])
        || !first.split(',').any(|c| c.trim_matches('"') == "event")
    {
        return None;
    }
    let mut rd = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(text.as_bytes());
    let header: Vec<String> = rd.headers().ok()?.iter().map(String::from).collect();
    let mut out = Vec::new();
    for row in rd.records() {
        let (line, got) = match row {
            Err(e) => (
                e.position().map_or(0, |p| p.line() as usize),
                Err(format!("CSV: {e}")),
            ),
            Ok(r) => (
                r.position().map_or(0, |p| p.line() as usize),
                Ok(row_value(&header, &r)),
            ),
        };
        out.push((line, got));
    }
    Some(out)
}

fn row_value(header: &[String], r: &csv::StringRecord) -> Value {
    let mut event = Map::new();
    let mut props = Map::new();
    for (k, cell) in header.iter().zip(r.iter()) {
        if let Some(key) = k.strip_prefix("properties.") {
            if !cell.is_empty() {
                let v = serde_json::from_str::<Value>(cell)
                    .ok()
                    .filter(|v| v.is_object() || v.is_boolean() || v.is_number())
                    .unwrap_or_else(|| Value::String(cell.to_string()));
                props.insert(key.to_string(), v);
            }
        } else {
            event.insert(k.clone(), Value::String(cell.to_string()));
        }
    }
    if !props.is_empty() {
        event.insert("properties".into(), Value::Object(props));
    }
    Value::Object(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_call_event_is_a_call_with_its_arguments_error_and_description() {
        let e = json!({"event": "$mcp_tool_call", "timestamp": "2026-12-01T10:00:00Z", "properties": {
            "$session_id": "ses_1", "$mcp_tool_name": "schedule", "$mcp_parameters": "{\"when\": \"9\"}",
            "$mcp_is_error": true, "$mcp_tool_description": "Book a slot."}});
        let Got::Ran(run, _) = event(&e).unwrap() else {
            panic!()
        };
        assert!(run.call && run.error);
        assert_eq!(run.arguments.unwrap()["when"], "9");
        assert_eq!(run.description.as_deref(), Some("Book a slot."));
        assert!(matches!(
            event(&json!({"event": "$mcp_tools_list"})).unwrap(),
            Got::Skip(_)
        ));
        assert!(event(&json!({"event": "$mcp_tool_call", "properties": {}})).is_err());
        assert!(looks_like(&e));
        assert_eq!(record(&json!({"results": [e, {"x": 1}]})).unwrap().len(), 2);
    }

    #[test]
    fn csv_exports_with_a_json_column_or_flattened_columns_are_read() {
        let flat = "event,timestamp,properties.$session_id,properties.$mcp_tool_name,properties.$mcp_is_error\n$mcp_tool_call,2026-12-01T10:00:00Z,ses_1,schedule,false\n";
        let rows = csv_rows(flat).unwrap();
        let v = rows[0].1.as_ref().unwrap();
        assert_eq!(v["properties"]["$mcp_tool_name"], "schedule");
        assert_eq!(v["properties"]["$mcp_is_error"], false);
        assert_eq!(rows[0].0, 2);
        let packed = "event,properties\n$mcp_tool_call,\"{\"\"$mcp_tool_name\"\": \"\"a\"\"}\"\n";
        let rows = csv_rows(packed).unwrap();
        assert!(
            matches!(event(rows[0].1.as_ref().unwrap()).unwrap(), Got::Ran(r, _) if r.name == "a")
        );
        assert!(csv_rows("{\"event\": 1}\n").is_none());
        let ragged = "event,timestamp\n$mcp_tool_call\n";
        assert!(csv_rows(ragged).unwrap()[0].1.is_err());
    }
}
