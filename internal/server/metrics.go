package server

import (
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
)

// getMetrics writes Prometheus text exposition format.
func (s *Server) getMetrics(w http.ResponseWriter, r *http.Request) {
	st := s.Status()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var b strings.Builder
	metric := func(name, typ, help string, v any) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s %v\n", name, help, name, typ, name, v)
	}
	metric("isovet_txns_ingested_total", "counter", "Transactions applied to the checker.", st.Ingested)
	metric("isovet_txns_checked_total", "counter", "Transactions whose verdicts are final.", st.Checked)
	metric("isovet_txns_pending", "gauge", "Transactions whose EXT verdicts are still provisional.", st.Pending)
	metric("isovet_txns_in_memory", "gauge", "Transactions held (pending or retained).", st.InMemory)
	metric("isovet_txns_duplicate_total", "counter", "Transactions ignored because their id was already seen.", st.Duplicates)
	metric("isovet_txns_late_total", "counter", "Transactions that arrived after the state they need was collected (unchecked).", st.Late)
	metric("isovet_txns_dropped_total", "counter", "Transactions dropped unchecked under the memory bound.", st.Dropped)
	metric("isovet_txns_rebuilt_total", "counter", "Transactions re-read from the stream at start.", st.Rebuilt)
	metric("isovet_ext_flips_total", "counter", "Provisional EXT verdicts changed by a late arrival.", st.Flips)
	fmt.Fprintf(&b, "# HELP isovet_violations_total Violations reported since start, by kind.\n# TYPE isovet_violations_total counter\n")
	kinds := make([]string, 0, len(st.ByKind))
	for k := range st.ByKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	if len(kinds) == 0 {
		fmt.Fprintf(&b, "isovet_violations_total 0\n")
	}
	for _, k := range kinds {
		fmt.Fprintf(&b, "isovet_violations_total{kind=%q} %d\n", k, st.ByKind[k])
	}
	metric("isovet_keys", "gauge", "Keys held.", st.Keys)
	metric("isovet_versions", "gauge", "Key versions held.", st.Versions)
	metric("isovet_memory_estimate_bytes", "gauge", "The checker's estimate of its own memory.", st.MemoryEstimate)
	metric("isovet_memory_bound_bytes", "gauge", "The server's memory bound (0: none); the checker keeps to half of it.", st.MemoryBound)
	metric("isovet_heap_bytes", "gauge", "Go heap in use.", ms.HeapAlloc)
	metric("isovet_lag_seconds", "gauge", "How far settling is behind the settle timeout.", st.LagSeconds)
	metric("isovet_queue_delay_seconds", "gauge", "How long the last batch waited for the checker.", st.QueueDelay)
	metric("isovet_queue_batches", "gauge", "Batches waiting for the checker.", st.Queue)
	metric("isovet_http_requests_total", "counter", "POST /v1/txns requests.", st.Requests)
	metric("isovet_http_bad_requests_total", "counter", "Requests refused as bad input.", st.BadRequests)
	metric("isovet_nats_messages_total", "counter", "JetStream messages applied.", st.NATSMessages)
	metric("isovet_nats_bad_messages_total", "counter", "JetStream messages refused as bad input.", st.NATSBad)
	metric("isovet_nats_redelivered_total", "counter", "JetStream redeliveries of messages already applied, acknowledged without applying them again.", st.NATSRedelivered)
	metric("isovet_subscribers", "gauge", "Clients streaming violations.", st.Subscribers)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write([]byte(b.String()))
}

const indexHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>isovet serve</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:60em}table{border-collapse:collapse}
td{padding:2px 12px 2px 0}pre{background:#f4f4f4;padding:8px;white-space:pre-wrap;max-height:30em;overflow:auto}</style></head>
<body><h1>isovet: online timestamp checking</h1>
<table id="st"></table>
<h2>Violations</h2><pre id="v">waiting…</pre>
<script>
const tok=new URLSearchParams(location.search).get("token"),q=tok?"token="+encodeURIComponent(tok):"";
const rows=["level","durability","uptime_seconds","ingested","checked","pending","in_memory","violations","violations_by_kind","duplicates","late","dropped","flips","lag_seconds","memory_estimate_bytes","memory_bound_bytes","nats_messages","http_requests","http_bad_requests","nats_redelivered","hint"];
async function tick(){try{const s=await (await fetch("/v1/status"+(q?"?"+q:""))).json();
document.getElementById("st").innerHTML=rows.map(k=>"<tr><td>"+k+"</td><td>"+JSON.stringify(s[k])+"</td></tr>").join("");}catch(e){}}
setInterval(tick,1000);tick();
const v=document.getElementById("v");let first=true;
const es=new EventSource("/v1/violations?format=sse&replay=1"+(q?"&"+q:""));
es.onmessage=e=>{const j=JSON.parse(e.data);if(first){v.textContent="";first=false}
v.textContent=(j.message||JSON.stringify(j))+"\n"+v.textContent.slice(0,100000)};
</script></body></html>
`

func (s *Server) getIndex(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(indexHTML))
}
