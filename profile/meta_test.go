package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/hwtopo"
)

// metaProfile has every metadata field the scanner reads: a topology with
// links, MIG devices and a host, workloads with every field, a MIG GPU,
// queues with every field.
const metaProfile = `{"schema_version":"seedance.profile/v1","started_at":"2026-01-05T09:00:00Z",
"ended_at":"2026-01-05T09:00:03Z","interval_s":1,"queues":[{"name":"q","kind":"kueue","cohort":"c","nominal_gpus":4,
"borrowing_limit_gpus":null,"lending_limit_gpus":1,"budget_gpu_minutes":600,"budget_use":{"used_gpu_minutes":10,"running_gpu_minutes":2,"x":1},
"flavors":["h100"],"quota_ref":"/spec","admitted":[{"workload":"ml/a","gpus":1,"start_s":0,"end_s":2}],
"pending":[{"workload":"","gpus":2,"start_s":1,"end_s":3,"y":[],"held_by":"QOSMaxGRESPerUser"}],"workloads_unknown":true,"future":[1]}],"nodes":[{"name":"n1","labels":{"zone":"a","rack":null,"k\u0041":"\u00e9"},
"topology":{"gpus":[{"index":0,"uuid":"GPU-1","pci_bus_id":"0000:18:00.0","numa_node":0,"cpu_affinity":"0-3",
"nvlinks":[{"link":0,"up":true,"remote_pci_bus_id":"0000:19:00.0","to_switch":false,"gbps":25.5},{"link":1,"up":false,"gbps":0}],
"mig":[{"uuid":"MIG-1","gi":1,"ci":0,"profile":"3g.40gb"}]},{"index":1,"numa_node":null,"nvlinks":null,"future":[1]}],
"matrix":[["X","NV1"],["NV1","X"]],"nvlink_gbps":[[0,25.5],[25.5,0]],"host":{"sockets":2,"numa_nodes":[{"id":0,"cpus":"0-3","memory_bytes":1024}]}},
"workloads":[{"id":"ml/a","name":"a","kind":"pod","state":"running","gpus":[0],"gpu_uuids":["GPU-1"],"gpu_count":1,
"gpu_memory_bytes":1048576,"pids":[42],"cpus_allowed":"0-3","labels":{"team":"ml"},"intervals":[{"start_s":0,"end_s":2}]}],
"gpus":[{"index":0,"uuid":"GPU-1","model":"H100","pci_bus_id":"0000:18:00.0","memory_total_bytes":85899345920,"numa_node":0,
"interval_s":1,"mig":{"parent_uuid":"GPU-0","profile":"3g.40gb","gi":1,"ci":0},"unsupported":["nvlink"],"errors":[{"t":1,"error":"timeout"}],
"series":{"t":[0,1,2],"gpu_util_pct":[5,null,7]}}]}]}`

// metaVariants are changes to metaProfile that encoding/json accepts or
// refuses, each to be read alike by the stream: wrong kinds, integers
// that are not, nulls in every place.
var metaVariants = []struct{ old, new string }{
	{`"nominal_gpus":4`, `"nominal_gpus":"4"`},
	{`"nominal_gpus":4`, `"nominal_gpus":null`},
	{`"nominal_gpus":4`, `"nominal_gpus":4,"nominal_gpus":5`},
	{`"budget_use":{`, `"budget_use":null,"b":{`},
	{`"budget_use":{`, `"budget_use":[{`},
	{`"used_gpu_minutes":10`, `"used_gpu_minutes":null`},
	{`"flavors":["h100"]`, `"flavors":[1]`},
	{`"flavors":["h100"]`, `"flavors":[]`},
	{`"admitted":[{`, `"admitted":[null,{`},
	{`"admitted":[{"workload":"ml/a","gpus":1`, `"admitted":[{"workload":"ml/a","gpus":"1"`},
	{`"admitted":[{`, `"admitted":null,"a":[{`},
	{`"workloads_unknown":true`, `"workloads_unknown":1`},
	{`"workloads_unknown":true`, `"workloads_unknown":null`},
	{`"queues":[{`, `"queues":[null,{`},
	{`"queues":[{`, `"queues":{"x":[{`},
	{`"kind":"kueue"`, `"kind":7`},
	{`"held_by":"QOSMaxGRESPerUser"`, `"held_by":null`},
	{`"held_by":"QOSMaxGRESPerUser"`, `"held_by":["x"]`},
	{`"sockets":2`, `"sockets":"2"`},
	{`"sockets":2`, `"sockets":2.5`},
	{`"sockets":2`, `"sockets":2e0`},
	{`"sockets":2`, `"sockets":null`},
	{`"link":0`, `"link":-0`},
	{`"link":0`, `"link":99999999999999999999`},
	{`"up":true`, `"up":1`},
	{`"up":true`, `"up":null`},
	{`"gbps":25.5`, `"gbps":"fast"`},
	{`"gbps":25.5`, `"gbps":1e400`},
	{`"matrix":[["X","NV1"],["NV1","X"]]`, `"matrix":[["X",null],null]`},
	{`"matrix":[["X","NV1"],["NV1","X"]]`, `"matrix":{"a":1}`},
	{`"nvlink_gbps":[[0,25.5],[25.5,0]]`, `"nvlink_gbps":[[0,null],[25.5,0]]`},
	{`"nvlink_gbps":[[0,25.5],[25.5,0]]`, `"nvlink_gbps":[[0,"x"],[25.5,0]]`},
	{`"host":{`, `"host":null,"h":{`},
	{`"mig":[{"uuid":"MIG-1"`, `"mig":[null,{"uuid":"MIG-1"`},
	{`"mig":[{"uuid":"MIG-1"`, `"mig":[{"uuid":7`},
	{`"memory_bytes":1024`, `"memory_bytes":-1024`},
	{`"memory_bytes":1024`, `"memory_bytes":1024.0`},
	{`"gpu_memory_bytes":1048576`, `"gpu_memory_bytes":-0`},
	{`"gpu_memory_bytes":1048576`, `"gpu_memory_bytes":-1`},
	{`"gpu_memory_bytes":1048576`, `"gpu_memory_bytes":18446744073709551616`},
	{`"memory_total_bytes":85899345920`, `"memory_total_bytes":8.5e10`},
	{`"memory_total_bytes":85899345920`, `"memory_total_bytes":null`},
	{`"pids":[42]`, `"pids":[42,null]`},
	{`"pids":[42]`, `"pids":42`},
	{`"gpu_uuids":["GPU-1"]`, `"gpu_uuids":[1]`},
	{`"labels":{"team":"ml"}`, `"labels":{"team":1}`},
	{`"labels":{"team":"ml"}`, `"labels":{"team":"ml","team":"ai"}`},
	{`"labels":{"team":"ml"}`, `"labels":["team"]`},
	{`"intervals":[{"start_s":0,"end_s":2}]`, `"intervals":[{"start_s":"0","end_s":2}]`},
	{`"intervals":[{"start_s":0,"end_s":2}]`, `"intervals":null`},
	{`"workloads":[{`, `"workloads":[null,{`},
	{`"mig":{"parent_uuid"`, `"mig":{"parent_uuid":null,"p"`},
	{`"mig":{"parent_uuid"`, `"mig":["parent_uuid"`},
	{`"errors":[{"t":1,"error":"timeout"}]`, `"errors":[{"t":1,"error":false}]`},
	{`"unsupported":["nvlink"]`, `"unsupported":"nvlink"`},
	{`"numa_node":0,"cpu_affinity"`, `"numa_node":"0","cpu_affinity"`},
	{`"cpu_affinity":"0-3",`, `"cpu_affinity":["0-3"],`},
	{`"topology":{`, `"topology":null,"t":{`},
	{`"topology":{`, `"topology":[{`},
	{`"interval_s":1,"mig"`, `"interval_s":true,"mig"`},
	{`"index":1,"numa_node":null`, `"index":1,"numa_node":null,"numa_node":2`},
	{`{"link":1,"up":false,"gbps":0}`, `{"link":1,"up":fals,"gbps":0}`},
	{`{"link":1,"up":false,"gbps":0}`, `{"link":1,"up":false,"gbps":0]`},
	{`{"link":1,"up":false,"gbps":0}`, `{"link":"1","up":false,"gbps":0}`},
	{`{"link":1,"up":false,"gbps":0}`, `{"link":1,"up":false,"gbps":0,"link":2}`},
}

// TestMetaAgreesWithEncodingJSON: the scanner's metadata readers accept
// and refuse what encoding/json does, and read the same values.
func TestMetaAgreesWithEncodingJSON(t *testing.T) {
	if !json.Valid([]byte(metaProfile)) {
		t.Fatal("metaProfile is not JSON")
	}
	docs := []string{metaProfile}
	for _, v := range metaVariants {
		if !strings.Contains(metaProfile, v.old) {
			t.Fatalf("%q is not in metaProfile", v.old)
		}
		docs = append(docs, strings.Replace(metaProfile, v.old, v.new, 1))
	}
	refused := 0
	for i, doc := range docs {
		want, errA := readEncodingJSON(strings.NewReader(doc))
		got, errB := Read(strings.NewReader(doc))
		if errD := walkDropped([]byte(doc)); (errD == nil) != (errB == nil) || (errD != nil && strings.TrimPrefix(errD.Error(), "read profile dropped: ") != errB.Error()) {
			t.Errorf("variant %d: dropping the topology's detail reads it otherwise:\n%v\n%v", i, errD, errB)
		}
		switch {
		case errB == nil && errA != nil:
			t.Errorf("variant %d: the stream accepted what encoding/json refuses (%v)", i, errA)
		case errA == nil && errB != nil && !stricter(errB):
			t.Errorf("variant %d: encoding/json accepted, the stream refused: %v", i, errB)
		case errA == nil && errB == nil:
			sameProfile(t, got, want)
		default:
			refused++
		}
	}
	if refused < 25 {
		t.Errorf("only %d variants were refused: the variants no longer test the kinds", refused)
	}
}

// TestDropTopologyDetail: a stream told to drop the detail hands out what
// Compact would keep of the full topology.
func TestDropTopologyDetail(t *testing.T) {
	full, err := Read(strings.NewReader(metaProfile))
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenStream(bytes.NewReader([]byte(metaProfile)), "meta")
	if err != nil {
		t.Fatal(err)
	}
	s.DropTopologyDetail()
	var n *Node
	if err := s.Walk(func(it Item) error {
		if it.End != nil {
			n = it.End
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(full.Nodes[0].Topology.Compact())
	got, _ := json.Marshal(n.Topology.Compact())
	if !bytes.Equal(got, want) {
		t.Fatalf("compact topology:\n%s\nwant\n%s", got, want)
	}
	if len(n.Topology.GPUs[0].NVLinks) != 0 || n.Topology.GPUs[0].UUID != "" {
		t.Fatalf("detail kept: %+v", n.Topology.GPUs[0])
	}
	if len(full.Nodes[0].Topology.GPUs[0].NVLinks) != 2 || len(full.Nodes[0].Topology.GPUs[0].MIG) != 1 {
		t.Fatalf("a full read lost the detail: %+v", full.Nodes[0].Topology.GPUs[0])
	}
}

// topologyOf is a topology of n GPUs whose NVLink bandwidths are all bw
// and whose matrix cells are all cell (the diagonal "X").
func topologyOf(n int, bw float64, cell string) *hwtopo.Topology {
	t := &hwtopo.Topology{}
	for i := 0; i < n; i++ {
		numa := i / 4
		t.GPUs = append(t.GPUs, hwtopo.GPU{Index: i, UUID: fmt.Sprintf("GPU-%d-%g", i, bw), NUMANode: &numa, CPUAffinity: "0-3"})
		row, bws := make([]string, n), make([]float64, n)
		for j := range row {
			row[j], bws[j] = cell, bw
		}
		row[i], bws[i] = "X", 0
		t.Matrix, t.NVLinkGBps = append(t.Matrix, row), append(t.NVLinkGBps, bws)
	}
	return t
}

// TestKnownTopologyValues: without detail, a matrix and a bandwidth table
// that an earlier node had byte for byte are that node's (one copy), a
// different one is read anew, and one longer than maxKnownBytes is read
// each time; every node's topology is what a full read's compacts to.
func TestKnownTopologyValues(t *testing.T) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	p := &Profile{SchemaVersion: SchemaVersion, StartedAt: start, EndedAt: start.Add(time.Second), IntervalS: 1, Complete: true}
	for i, topo := range []*hwtopo.Topology{topologyOf(8, 26.5, "NV18"), topologyOf(8, 26.5, "NV18"), topologyOf(8, 13.25, "NV12"),
		topologyOf(40, 123.456789012345, "NV18"), topologyOf(40, 123.456789012345, "NV18")} {
		p.Nodes = append(p.Nodes, Node{Name: fmt.Sprintf("n%d", i), Topology: topo,
			GPUs: []GPU{{UUID: fmt.Sprintf("g%d", i), Series: Series{T: []float64{0}, GPUUtilPct: []float64{1}}}}})
	}
	var b bytes.Buffer
	if err := Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	if big, _ := json.Marshal(p.Nodes[3].Topology.NVLinkGBps); len(big) <= maxKnownBytes {
		t.Fatalf("the large table is %d bytes, not past maxKnownBytes", len(big))
	}
	s, err := OpenStream(bytes.NewReader(b.Bytes()), "known")
	if err != nil {
		t.Fatal(err)
	}
	s.DropTopologyDetail()
	var got []*hwtopo.Topology
	if err := s.Walk(func(it Item) error {
		if it.End != nil {
			got = append(got, it.End.Topology)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, topo := range got {
		g, _ := json.Marshal(topo.Compact())
		w, _ := json.Marshal(p.Nodes[i].Topology.Compact())
		if !bytes.Equal(g, w) {
			t.Errorf("node %d: compact topology\n%.200s\nwant\n%.200s", i, g, w)
		}
	}
	same := func(a, b *hwtopo.Topology) bool {
		return &a.NVLinkGBps[0][0] == &b.NVLinkGBps[0][0] && &a.Matrix[0][0] == &b.Matrix[0][0]
	}
	if !same(got[0], got[1]) {
		t.Error("nodes 0 and 1 have the same bytes but were read twice")
	}
	if same(got[1], got[2]) || same(got[3], got[4]) {
		t.Error("a different table, or one past maxKnownBytes, was taken from an earlier node")
	}
}

// TestKnownLinksAreChecked: a GPU's links that repeat the last node's are
// passed by their bytes, and a later node's that differ, by a byte that
// breaks them, are read and refused as a full read refuses them.
func TestKnownLinksAreChecked(t *testing.T) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	p := &Profile{SchemaVersion: SchemaVersion, StartedAt: start, EndedAt: start.Add(time.Second), IntervalS: 1, Complete: true}
	for i := 0; i < 3; i++ {
		topo := topologyOf(2, 26.5, "NV18")
		for k := range topo.GPUs {
			topo.GPUs[k].NVLinks = []hwtopo.NVLink{{Link: 0, Up: true, GBps: 26.5}, {Link: 1, Up: true, GBps: 26.5}}
		}
		p.Nodes = append(p.Nodes, Node{Name: fmt.Sprintf("n%d", i), Topology: topo,
			GPUs: []GPU{{UUID: fmt.Sprintf("g%d", i), Series: Series{T: []float64{0}, GPUUtilPct: []float64{1}}}}})
	}
	var b bytes.Buffer
	if err := Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	good := b.String()
	if err := walkDropped([]byte(good)); err != nil {
		t.Fatalf("three nodes alike: %v", err)
	}
	last := strings.LastIndex(good, `"gbps":26.5}`)
	for _, bad := range []string{`"gbps":"x"}`, `"gbps":-1e999}`, `"gbps":26.5,"link":3}`} {
		doc := good[:last] + bad + good[last+len(`"gbps":26.5}`):]
		_, errFull := Read(strings.NewReader(doc))
		errDropped := walkDropped([]byte(doc))
		if errDropped == nil || errFull == nil || strings.TrimPrefix(errDropped.Error(), "read profile dropped: ") != errFull.Error() {
			t.Errorf("%s in the last node's links: dropped %v, full %v", bad, errDropped, errFull)
		}
	}
}
