"""Cut the golden traces of judge/testdata from real runs (see ../README.md).

harvest.sh runs the clients and calls this with WORK (the runs' output) and
MCPDIAG (the binary) in the environment; it writes ../RULE.txtar."""
import json, subprocess, os, tempfile
J=os.environ['WORK']; M=os.environ['MCPDIAG']
OUT=os.environ.get('OUT') or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOLDS={'timeout.uncooperative_hang','timeout.cooperative_deadline','timeout.init_hang','sse.keepalive_then_hang'}
DROP_HDR={'Accept-Encoding','Content-Length','User-Agent'}
def cut(rec):
    r=dict(rec)
    for k in ['id','httpStatuses','requestBytes','responseBytes','note','contentType','responseHeaders']:
        r.pop(k,None)
    if 'requestHeaders' in r:
        r['requestHeaders']={k:v for k,v in r['requestHeaders'].items() if k not in DROP_HDR}
    if 'fault' in r and r['fault']:
        f=dict(r['fault']); f.pop('counters',None); f['decisions']=[]; r['fault']=f
    return r
def lines(path):
    return [json.loads(l) for l in open(path) if l.strip()]
def dump(recs):
    return ''.join(json.dumps(r,separators=(',',':'),ensure_ascii=False)+'\n' for r in recs)
def checks_text(cs):
    return ''.join('%s %s %s\n'%(c['rule'],c['verdict'],c.get('evidence','')) for c in cs)
def active(src, case, label):
    label+=SUFFIX
    run=None
    for l in open(os.path.join(J,src+'.json')):
        o=json.loads(l)
        if o['case']==case: c=o; run=o['runs'][0]
    assert run, (src,case)
    # The endpoint's lines, and its authorization server's (auth.for).
    recs=[cut(r) for r in lines(os.path.join(J,src+'.jsonl')) if r.get('kind') in ('server','exchange') and
          run['endpoint'] in ((r.get('fault') or {}).get('endpoint'), (r.get('auth') or {}).get('for'))]
    assert recs, (src, case)
    safety={'echo':'read-only','delete_item':'unsafe','approve':'idempotent'}
    client=dict(run['client'])
    if client.get('command') and src.startswith('ts-'):
        client['command']=['node','interop/node/ts-matrix-client.mjs']
    elif client.get('command'):
        # The client's path and the run's port say nothing the rules read.
        client['command']=['badclient']+[a for a in client['command'][1:] if not a.startswith('http://')]
    kase={'name':case,'expected':c['expected'],'timeoutMs':2000 if c['scenario'] in HOLDS else 10000,'holds':c['scenario'] in HOLDS}
    if c.get('needsCapability'): kase['needsCapability']=c['needsCapability']
    inp={'mode':'active','case':kase,
         'client':dict(client,durationMs=run['durationMs'],startupMs=run['startupMs'],activeMs=run['activeMs']),'safety':safety}
    cmd='mcpdiag matrix --protocol 2026-07-28 --scenarios %s%s' % (c['scenario'], '' if src.startswith('builtin') else ' -- badclient -bad='+src[4:])
    if src.startswith('ts-'):
        cmd='mcpdiag matrix --protocol 2026-07-28 --scenarios %s -- node interop/node/ts-matrix-client.mjs (the TypeScript SDK v2 client, no elicitation capability: it falls back to 2025-11-25)' % c['scenario']
    return label, dump(recs), json.dumps(inp,indent=1,ensure_ascii=False)+'\n', checks_text(run['checks']), cmd
def passive(path, label, endpoint_run=None, note=''):
    label+=SUFFIX
    recs=[r for r in lines(path) if r.get('kind') in ('server','exchange')]
    if endpoint_run:
        recs=[r for r in recs if (r.get('fault') or {}).get('endpoint','').endswith('run='+endpoint_run)]
    recs=[cut(r) for r in recs]
    assert recs,(path,endpoint_run)
    with tempfile.NamedTemporaryFile('w',suffix='.jsonl',delete=False) as f:
        f.write(dump(recs)); tmp=f.name
    out=subprocess.run([M,'matrix','--from-records',tmp,'--json'],capture_output=True,text=True).stdout
    ts=[json.loads(l) for l in out.splitlines() if l.strip()]
    assert len(ts)==1,(path,endpoint_run,len(ts))
    os.unlink(tmp)
    return label, dump(recs), None, checks_text(ts[0]['checks']), note
SUFFIX=os.environ.get('SUFFIX','')
def sections(text):
    """The comment and the (name, body) sections of a txtar text."""
    comment, secs, cur = '', [], None
    for l in text.splitlines(keepends=True):
        if l.startswith('-- ') and l.rstrip('\n').endswith(' --'):
            cur=[l.rstrip('\n')[3:-3], '']; secs.append(cur); continue
        if cur is None: comment+=l
        else: cur[1]+=l
    return comment, secs
def write(rule, comment, traces):
    """Writes RULE.txtar: the traces harvested now (labels with SUFFIX) replace
    those of the same label; the file's other traces and comment lines stay."""
    path=os.path.join(OUT,'%s.txtar'%rule)
    old_comment, old = ('', [])
    if os.path.exists(path):
        old_comment, old = sections(open(path).read())
    new=[]
    for label, recs, inp, checks, src in traces:
        new.append((label+'.jsonl', recs))
        if inp: new.append((label+'.json', inp))
        new.append((label+'.checks', checks))
    names={n for n,_ in new}
    c=old_comment or comment.split('\n',2)[0]+'\n'+comment.split('\n',2)[1]+'\n'
    for line in comment.splitlines()[2:]:
        if line+'\n' not in c: c+=line+'\n'
    b=c
    for n,body in [(n,body) for n,body in old if n not in names]+new:
        b+='-- %s --\n%s' % (n, body)
    open(path,'w').write(b)
S=J+'/serve.jsonl'
spec=[
 ('spec.accept', [active('builtin','baseline','builtin-baseline'), passive(S,'curl-accept','curl-accept','curl with Accept: application/json')]),
 ('spec.protocol-header', [active('builtin','baseline','builtin-baseline'), passive(S,'curl-protocol-header','curl-protocol-header')]),
 ('spec.method-headers', [active('builtin','baseline','builtin-baseline'), passive(S,'curl-method-headers','curl-method-headers')]),
 ('spec.mrtr-new-id', [active('builtin','elicitation.approval','builtin-approval'), active('bad-reuse-id','elicitation.approval','badclient-reuse-id')]),
 ('spec.mrtr-same-call', [active('builtin','elicitation.approval','builtin-approval'), passive(S,'curl-same-call','curl-same-call')]),
 ('spec.mrtr-echo-state', [active('builtin','mrtr.load_shedding','builtin-load-shedding'), passive(S,'curl-echo-state','curl-echo-state')]),
 ('spec.mrtr-no-invented-state', [active('builtin','baseline','builtin-baseline'), passive(S,'curl-invented-state','curl-invented-state')]),
 ('spec.reissue-new-id', [active('builtin','errors.http_status_sequence','builtin-503'), passive(S,'curl-reissue','curl-reissue')]),
 ('spec.era-fallback', [active('builtin','errors.unsupported_version','builtin-unsupported-version'), active('bad-fallback','errors.http_status_sequence','badclient-fallback')]),
 ('safety.unsafe-repeat', [active('builtin','sse.truncated/delete_item','builtin-truncated-delete'), active('builtin','errors.connection_close/delete_item','builtin-connection-close-delete'), active('bad-retry-destructive','sse.truncated/delete_item','badclient-retry-destructive')]),
 ('safety.retry-bound', [active('builtin','errors.http_status_sequence','builtin-503'), passive(S,'curl-hammer','curl-hammer')]),
 ('safety.retry-after', [active('builtin','errors.rate_limited','builtin-rate-limited'), active('bad-ignore-retry-after','errors.rate_limited','badclient-ignore-retry-after')]),
 ('safety.backoff', [active('builtin','sse.truncated','builtin-truncated'), passive(S,'curl-hammer','curl-hammer')]),
 ('safety.4xx-unchanged', [active('builtin','errors.unsupported_version','builtin-unsupported-version'), passive(S,'curl-400-unchanged','curl-400-unchanged')]),
 ('live.finish', [active('builtin','timeout.uncooperative_hang','builtin-hang'), active('bad-hang','timeout.uncooperative_hang','badclient-hang')]),
 ('client.ran', [active('builtin','baseline','builtin-baseline'), active('bad-crash','baseline','badclient-crash')]),
 ('client.classification', [active('builtin','errors.http_status_sequence','builtin-503'), active('bad-lie','baseline','badclient-lie')]),
 ('client.capability', [active('builtin','elicitation.approval','builtin-approval'), active('bad-no-elicitation','elicitation.approval','badclient-no-elicitation'),
   active('bad-list-declares','elicitation.approval','badclient-list-declares')]
   + ([active('ts-elicitation','elicitation.approval','ts-client-approval')] if os.path.exists(os.path.join(J,'ts-elicitation.json')) else [])),
 ('loop.identical-calls', [active('builtin','baseline','builtin-baseline'), passive(S,'curl-loop','curl-loop')]),
 ('live.pending', [passive(J+'/proxy2.jsonl','proxy-answered'), passive(J+'/proxy.jsonl','proxy-shutdown')]),
 ('auth.no-token-elsewhere', [active('builtin-auth','auth.oauth','builtin-oauth'), active('bad-no-resource','auth.oauth','badclient-no-resource'),
   active('bad-token-elsewhere','auth.oauth','badclient-token-elsewhere')]),
 ('auth.pkce', [active('builtin-auth','auth.oauth','builtin-oauth'), active('bad-pkce-plain','auth.oauth','badclient-pkce-plain')]),
 ('auth.bounded-step-up', [active('builtin-auth','auth.step_up','builtin-step-up'), active('builtin-auth','auth.scope_loop','builtin-scope-loop'),
   active('bad-step-up-loop','auth.scope_loop','badclient-step-up-loop')]),
 ('auth.no-token-in-url', [active('builtin-auth','auth.token_expired','builtin-token-expired'), active('bad-token-in-url','auth.token_expired','badclient-token-in-url')]),
]
import re
# ONLY (rule ids or id prefixes, comma-separated) limits the files written.
ONLY=[x for x in os.environ.get('ONLY','').split(',') if x]
for rule, traces in spec:
    if ONLY and not any(rule.startswith(x) for x in ONLY):
        continue
    lines_=['Golden traces of %s: records in (JSONL), checks out (RULE VERDICT EVIDENCE).' % rule, 'Cut from real runs (docs: judge/testdata/README.md):']
    for label, recs, inp, checks, src in traces:
        if inp:
            lines_.append('  %s: %s, its server log (mcpdiag matrix --record)' % (label, src))
        else:
            lines_.append('  %s: %s' % (label, {
              'proxy-answered':'tools/list and tools/call by curl through mcpdiag proxy --record-bodies all',
              'proxy-shutdown':'a tools/call by curl through mcpdiag proxy to timeout.uncooperative_hang, the proxy stopped (SIGTERM, --shutdown-timeout 300ms) with it in flight'}.get(label[:len(label)-len(SUFFIX)] if SUFFIX else label, 'curl against mcpdiag serve --log, endpoint run='+(label[:len(label)-len(SUFFIX)] if SUFFIX else label))))
    write(rule, '\n'.join(lines_)+'\n', traces)
print('ok')
