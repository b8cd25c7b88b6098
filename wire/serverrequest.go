package wire

// The one statement of "this event is a server request": the classifier
// (which hands each to its OnServerRequest), the recorder's request watch
// and its reading of GET streams, and the client's standalone stream all
// ask IsServerRequest (or, with the members already read, IsRequestMembers
// and EventCarriesMessage), so that what one of them notes as a request is
// what the others do (FuzzIsServerRequest holds it against ParseMessage and
// the classifier).

// EventCarriesMessage reports whether an event of type eventType is read for
// a JSON-RPC message: one of type "message", or of none (WHATWG's default).
// An event of another type (event: ping, event: endpoint) carries none.
func EventCarriesMessage(eventType string) bool {
	return eventType == "" || eventType == "message"
}

// IsRequestMembers reports whether a JSON object whose top-level members
// method, result, error, jsonrpc and id have the raw values given (nil when
// the member is absent; the last of a repeated member) is a JSON-RPC
// request: it has a method and neither a result nor an error, jsonrpc is
// the string "2.0" and its id is not null. A method with a result or an
// error is read as a response, and a message without jsonrpc "2.0" as no
// message, as the classifier reads them.
func IsRequestMembers(method, result, errv, jsonrpc, id []byte) bool {
	return method != nil && result == nil && errv == nil &&
		jsonrpc != nil && StringIs(jsonrpc, "2.0") &&
		id != nil && !IDFromRaw(id).IsNull()
}

// IsServerRequest reports whether an event of type eventType whose data is
// data is a request of the server that its peer must answer: the event
// carries a message (EventCarriesMessage), and data is one valid JSON
// object (JSON white space around it allowed) whose members make it a
// request (IsRequestMembers). It does not allocate (unless a member name
// is escaped), and reads an event that is no request once.
func IsServerRequest(eventType string, data []byte) bool {
	if !EventCarriesMessage(eventType) {
		return false
	}
	obj := trimSpace(data)
	if len(obj) == 0 || obj[0] != '{' {
		return false
	}
	var method, result, errv, jsonrpc, id []byte
	// The members first, without validating (a notification or a result,
	// most events, is read once), then, for what reads as a request, the
	// validation: valid JSON has the members EachField read.
	if EachField(obj, func(k, v []byte) bool {
		switch {
		case KeyIs(k, "method"):
			method = v
		case KeyIs(k, "result"):
			result = v
		case KeyIs(k, "error"):
			errv = v
		case KeyIs(k, "jsonrpc"):
			jsonrpc = v
		case KeyIs(k, "id"):
			id = v
		}
		return true
	}) != nil {
		return false
	}
	return IsRequestMembers(method, result, errv, jsonrpc, id) && Valid(obj)
}

// HeadRulesOutRequest reports whether head, the first bytes of an event's
// data (cut anywhere), shows that IsServerRequest is false for the whole
// data, whatever follows: a top-level result or error member begins in it
// (read as ScanHead reads the members before the cut). Whole data that is
// valid JSON has that member, and a member result or error makes no
// request (IsRequestMembers); whole data that is not valid JSON is no
// request either. A reader of a stream as it arrives can stop keeping
// such an event's data there.
func HeadRulesOutRequest(head []byte) bool {
	_, _, response := ScanHead(head)
	return response
}
