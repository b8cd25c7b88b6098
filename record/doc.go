// Package record holds mcpdiag's diagnostic record: one JSON line per HTTP
// exchange and one summary line per logical call, written by the diagnostic
// client, the fault server and the recording proxy, and read by
// `mcpdiag report`.
//
// A producer fills a [Record] (usually with [Record.SetRequest] and
// [Record.SetResult]), links the exchanges of one logical call through a
// [Call], and hands each record to a [Writer]:
//
//	w, err := record.OpenFile("calls.jsonl", record.FileOptions{})
//	if err != nil { … }
//	defer w.Close()
//	call := record.NewCall(record.Record{Client: "mcpdiag@dev"})
//	ex := &record.Record{Kind: record.KindExchange, HTTPMethod: "POST", URL: u}
//	ex.SetRequest(body)
//	ex.SetResult(res) // res is a *classify.Result
//	call.Add(ex)
//	w.Write(ex)
//	w.Write(call.Summary())
//
// # Schema
//
// The JSON field names are a contract, documented field by field in
// docs/records.md. Fields are only ever added; a consumer must ignore fields
// it does not know. The fields of the article this product grew from
// (client, protocolVersion, scenario, method, postCount, httpStatuses,
// jsonrpc{id, errorCode}, resultType, outcome, retryOrigin) are always
// present, with those exact names.
//
// # Redaction
//
// Every record goes through an [Encoder] before it reaches a file, and the
// encoder redacts it without modifying the caller's record: credential
// headers are replaced by "[redacted]", session ids are hashed, OAuth fields
// in JSON and form bodies are replaced, "Bearer …" strings are cut, bodies are
// capped, and the secrets registered with [Redactor.AddSecret] (for example
// the bearer token given on the command line) are scrubbed from every string.
// A producer therefore may store raw headers and bodies in a record; it never
// has to remember to redact them. As a last line of defence the encoder
// replaces a registered secret still found in the encoded line, and refuses
// the line when that would break it.
//
// # Writers
//
// [FileWriter] appends one line per record with a single write on a file
// opened O_APPEND, with an fsync policy ([SyncPolicy]). [StreamWriter] writes
// JSON lines to any io.Writer such as stdout. [Async] puts one goroutine and a
// bounded queue in front of either, with a documented full-queue policy
// ([QueueBlock] or [QueueDrop]); dropped records are counted and reported in
// a final "dropped" record, never lost silently. [OpenSink] opens the
// destination a command names (a file, or "-" for stdout), optionally behind
// an Async, as a [Sink] that counts every record written or lost and names
// each loss ([PrintLosses]); it is what every mcpdiag command writes records
// through.
//
// # Reading
//
// [Reader] streams records back with a bounded line size. A malformed or
// oversized line yields a [*LineError] carrying its line number; the caller
// counts it, skips it and goes on.
package record
