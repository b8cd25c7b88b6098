#!/bin/bash
# The passive golden traces: curl as the client, each run on its own
# endpoint of mcpdiag serve (its log, serve.jsonl), and through mcpdiag proxy
# (its records, proxy.jsonl, proxy2.jsonl). Run in $WORK by harvest.sh.
set -u
M=$MCPDIAG
PORT=18321; PPORT=18322
rm -f serve.jsonl proxy.jsonl proxy2.jsonl
$M serve --addr 127.0.0.1:$PORT --seed 1 --log serve.jsonl > serve.out 2>&1 &
SPID=$!
sleep 1
META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"curl","version":"8"}}'
call() { # id args [extra params json]
  echo "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":$2${3:+,$3},$META}}"
}
H=(-s -o /dev/null -H 'Content-Type: application/json' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo')
A=(-H 'Accept: application/json, text/event-stream')
url() { # scenario run [params]
  local u="http://127.0.0.1:$PORT/s/$1/mcp?run=$2"
  if [ -n "${3:-}" ]; then u="$u&params=$(jq -rn --arg p "$3" '$p|@uri')"; fi
  echo "$u"
}
# spec.accept: Accept lists only application/json
curl "${H[@]}" -H 'Accept: application/json' -d "$(call 1 '{"text":"hi"}')" "$(url baseline curl-accept)"
# spec.protocol-header: the header says 2026-07-28, _meta says 2025-11-25
curl "${H[@]}" "${A[@]}" -d "$(call 1 '{"text":"hi"}' | sed 's/"io.modelcontextprotocol\/protocolVersion":"2026-07-28"/"io.modelcontextprotocol\/protocolVersion":"2025-11-25"/')" "$(url baseline curl-protocol-header)"
# spec.method-headers: Mcp-Method says tools/list on a tools/call
curl -s -o /dev/null -H 'Content-Type: application/json' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' -H 'Mcp-Name: echo' "${A[@]}" -d "$(call 1 '{"text":"hi"}')" "$(url baseline curl-method-headers)"
# spec.mrtr-no-invented-state: a requestState no answer issued
curl "${H[@]}" "${A[@]}" -d "$(call 1 '{"text":"hi"}' '"requestState":"invented-by-the-client"')" "$(url baseline curl-invented-state)"
# spec.mrtr-same-call / spec.mrtr-echo-state: mrtr.load_shedding issues a requestState
state() { curl -s -H 'Content-Type: application/json' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' "${A[@]}" -d "$1" "$2" | sed 's/^data: //' | jq -Rr 'fromjson? | .result.requestState // empty' | tail -1; }
U=$(url mrtr.load_shedding curl-same-call)
S=$(state "$(call 1 '{"text":"hi"}')" "$U"); echo "state: $S"
curl "${H[@]}" "${A[@]}" -d "$(call 2 '{"text":"another call"}' "\"requestState\":$(jq -n --arg s "$S" '$s')")" "$U"
U=$(url mrtr.load_shedding curl-echo-state)
S=$(state "$(call 1 '{"text":"hi"}')" "$U"); echo "state: $S"
curl "${H[@]}" "${A[@]}" -d "$(call 2 '{"text":"hi"}' "\"requestState\":$(jq -n --arg s "${S}x" '$s')")" "$U"
# spec.reissue-new-id: the same id again after a 503
U=$(url errors.http_status_sequence curl-reissue '{"statusCodes":[503,200],"match":{"method":"tools/call"}}')
curl "${H[@]}" "${A[@]}" -d "$(call 7 '{"text":"hi"}')" "$U"; sleep 0.05
curl "${H[@]}" "${A[@]}" -d "$(call 7 '{"text":"hi"}')" "$U"
# safety.retry-bound, safety.backoff: five re-sends at once after 503s (one curl, one connection)
U=$(url errors.http_status_sequence curl-hammer '{"statusCodes":[503,503,503,503,503,200],"match":{"method":"tools/call"}}')
curl "${H[@]}" "${A[@]}" -d "$(call 1 '{"text":"hi"}')" "$U" --next "${H[@]}" "${A[@]}" -d "$(call 2 '{"text":"hi"}')" "$U" --next "${H[@]}" "${A[@]}" -d "$(call 3 '{"text":"hi"}')" "$U" --next "${H[@]}" "${A[@]}" -d "$(call 4 '{"text":"hi"}')" "$U" --next "${H[@]}" "${A[@]}" -d "$(call 5 '{"text":"hi"}')" "$U" --next "${H[@]}" "${A[@]}" -d "$(call 6 '{"text":"hi"}')" "$U"
# safety.4xx-unchanged: the same request again after a 400, nothing changed
U=$(url errors.http_status_sequence curl-400-unchanged '{"statusCodes":[400,200],"match":{"method":"tools/call"}}')
curl "${H[@]}" "${A[@]}" -d "$(call 1 '{"text":"hi"}')" "$U"; sleep 0.05
curl "${H[@]}" "${A[@]}" -d "$(call 2 '{"text":"hi"}')" "$U"
# loop.identical-calls: the same call three times after complete answers
U=$(url baseline curl-loop)
for i in 1 2 3; do curl "${H[@]}" "${A[@]}" -d "$(call $i '{"text":"hi"}')" "$U"; sleep 0.02; done
# live.pending: through the proxy; a call the upstream holds is still in flight when the proxy shuts down
$M proxy --listen 127.0.0.1:$PPORT --upstream "$(url timeout.uncooperative_hang proxy-hang '{"hangMs":8000}')" --record proxy.jsonl --record-bodies all --shutdown-timeout 300ms > proxy.out 2>&1 &
PPID2=$!
sleep 1
curl "${H[@]}" "${A[@]}" -d "$(call 1 '{"text":"hi"}')" "http://127.0.0.1:$PPORT/" &
CPID=$!
sleep 0.5
kill -TERM $PPID2; wait $PPID2; echo "proxy exit $?"
wait $CPID
# live.pending pass: a call answered through the proxy
$M proxy --listen 127.0.0.1:$PPORT --upstream "$(url baseline proxy-ok)" --record proxy2.jsonl --record-bodies all > proxy2.out 2>&1 &
PPID2=$!
sleep 1
curl -s -o /dev/null -H 'Content-Type: application/json' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' "${A[@]}" -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{$META}}" "http://127.0.0.1:$PPORT/"
curl "${H[@]}" "${A[@]}" -d "$(call 2 '{"text":"hi"}')" "http://127.0.0.1:$PPORT/"
kill -TERM $PPID2; wait $PPID2; echo "proxy2 exit $?"
kill -TERM $SPID; wait $SPID; echo "serve exit $?"
