package profile

import (
	"bytes"
	"hash/maphash"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/internal/jsonscan"
)

// A node's metadata (topology, workloads) read with the scanner, as
// encoding/json would read it into the same types (FuzzStreamAgreesWithRead
// holds the two together); a key twice in one object is refused, as
// everywhere in the stream. With detail false, a topology's per-link,
// per-MIG and identity fields are checked and dropped (the analysis keeps
// the compact form only).

// metaReader reads metadata from sc.
type metaReader struct {
	sc      *jsonscan.Scanner
	detail  bool          // keep what hwtopo.Topology.Compact drops
	checked *checkedLists // without detail: link lists known good
}

// object reads an object field by field (null leaves it), refusing a key
// seen twice.
func (r metaReader) object(field func(key string) error) error {
	if present, err := r.sc.Open('{'); !present || err != nil {
		return err
	}
	return members(r.sc, field)
}

// optional reads a value into a new T that *dst then points to (null: nil).
func optional[T any](r metaReader, dst **T, read func(*T) error) error {
	if null, err := r.sc.IsNull(); null || err != nil {
		*dst = nil
		return err
	}
	*dst = new(T)
	return read(*dst)
}

// listOf reads a list into *dst, each element by read (null: nil; []:
// an empty list, as encoding/json reads them).
func listOf[T any](r metaReader, dst *[]T, read func(*T) error) error {
	present, err := r.sc.Open('[')
	if !present || err != nil {
		if err == nil {
			*dst = nil
		}
		return err
	}
	*dst = []T{}
	return r.sc.Array(func(int) error {
		var zero T
		*dst = append(*dst, zero)
		return read(&(*dst)[len(*dst)-1])
	})
}

// topology reads a node's topology (null: none).
func (r metaReader) topology(dst **hwtopo.Topology) error {
	return optional(r, dst, func(t *hwtopo.Topology) error {
		return r.object(func(key string) error {
			switch key {
			case "gpus":
				return listOf(r, &t.GPUs, r.topoGPU)
			case "matrix":
				return known(r, &t.Matrix, r.matrices(), func(r metaReader, m *[][]string) error {
					return listOf(r, m, func(row *[]string) error { return listOf(r, row, r.sc.String) })
				})
			case "nvlink_gbps":
				return known(r, &t.NVLinkGBps, r.bandwidths(), func(r metaReader, m *[][]float64) error {
					return listOf(r, m, func(row *[]float64) error { return listOf(r, row, r.sc.Float) })
				})
			case "host":
				return optional(r, &t.Host, r.host)
			}
			return r.sc.Skip()
		})
	})
}

// topoGPU reads one GPU of a topology.
func (r metaReader) topoGPU(g *hwtopo.GPU) error {
	return r.object(func(key string) error {
		switch key {
		case "index":
			return r.sc.Int(&g.Index)
		case "uuid":
			return r.detailString(&g.UUID)
		case "pci_bus_id":
			return r.detailString(&g.BusID)
		case "numa_node":
			return optional(r, &g.NUMANode, r.sc.Int)
		case "cpu_affinity":
			return r.sc.String(&g.CPUAffinity)
		case "nvlinks":
			return r.nvlinks(g)
		case "mig":
			return r.migs(g)
		}
		return r.sc.Skip()
	})
}

// detailString reads a string that only a reader of the detail keeps.
func (r metaReader) detailString(dst *string) error {
	if r.detail {
		return r.sc.String(dst)
	}
	return r.sc.CheckString()
}

// maxLinksBytes bounds a GPU's nvlinks list read as raw bytes (18 links
// take about 2 KB).
const maxLinksBytes = 64 << 10

// nvlinks reads a GPU's links (kept only with detail). A DGX node has a
// hundred and more, alike from node to node of a kind: without detail a
// list is checked once, then known by its bytes (checkedLists).
func (r metaReader) nvlinks(g *hwtopo.GPU) error {
	if r.detail || r.checked == nil {
		return r.readLinks(g)
	}
	last := &r.checked.last[uint(g.Index)%uint(len(r.checked.last))]
	if r.sc.Same(*last) {
		return nil // the list of the last GPU with this index, byte for byte
	}
	r.sc.Peek()
	at := r.sc.Offset()
	raw, err := r.sc.RawValue(maxLinksBytes)
	if err != nil {
		return err
	}
	if h := maphash.Bytes(r.checked.seed, raw); !r.checked.seen[h] {
		if err := fromRaw(raw, at, func(sub metaReader) error { return sub.readLinks(g) }); err != nil {
			return err
		}
		if len(r.checked.seen) < maxChecked {
			r.checked.seen[h] = true
		}
	}
	*last = append((*last)[:0], raw...)
	return nil
}

// maxChecked bounds the link lists a stream remembers.
const maxChecked = 4096

// checkedLists are the link lists a stream has checked, by a hash of
// their bytes (seeded per process: no input can aim at a collision), and
// the matrices and bandwidths it has read, by their bytes (known).
type checkedLists struct {
	seed maphash.Seed
	seen map[uint64]bool
	// last is the last list checked for a GPU of each index (mod its
	// length), whose bytes the next node's GPU of that index most likely
	// repeats (Scanner.Same: one memory compare where a walk of its
	// brackets and strings reads it byte by byte).
	last     [16][]byte
	matrix   map[string][][]string
	nvlinkBW map[string][][]float64
}

// matrices and bandwidths are the values known by their bytes (known);
// nil with detail.
func (r metaReader) matrices() map[string][][]string {
	if r.checked == nil {
		return nil
	}
	return r.checked.matrix
}

func (r metaReader) bandwidths() map[string][][]float64 {
	if r.checked == nil {
		return nil
	}
	return r.checked.nvlinkBW
}

// maxKnown bounds the values of a kind a stream knows by their bytes;
// maxKnownBytes the length of one (a 16-GPU matrix is about 2 KB).
const (
	maxKnown      = 64
	maxKnownBytes = 16 << 10
)

// known reads a value that the nodes of a kind repeat byte for byte (a
// topology's matrix, its NVLink bandwidths) once, then knows it by its
// bytes: every later node with the same bytes gets the same value, read
// only (hwtopo.Topology.Compact copies the matrix and shares the
// bandwidths). Only without detail; a value past maxKnownBytes is read
// each time. Its errors are read's, at the same offsets.
func known[T any](r metaReader, dst *T, seen map[string]T, read func(metaReader, *T) error) error {
	if r.detail || seen == nil {
		return read(r, dst)
	}
	r.sc.Peek()
	at := r.sc.Offset()
	raw, ok, err := r.sc.RawValueUpTo(maxKnownBytes)
	if err != nil {
		return err
	}
	if !ok { // past maxKnownBytes, left unread
		return read(r, dst)
	}
	if v, hit := seen[string(raw)]; hit {
		*dst = v
		return nil
	}
	if err := fromRaw(raw, at, func(sub metaReader) error { return read(sub, dst) }); err != nil {
		return err
	}
	if len(seen) < maxKnown {
		seen[string(raw)] = *dst
	}
	return nil
}

// readLinks reads a GPU's links, keeping them with detail.
func (r metaReader) readLinks(g *hwtopo.GPU) error {
	var links []hwtopo.NVLink
	err := listOf(r, &links, r.nvlink)
	if r.detail {
		g.NVLinks = links
	}
	return err
}

// nvlink reads one link.
func (r metaReader) nvlink(l *hwtopo.NVLink) error {
	return r.object(func(key string) error {
		switch key {
		case "link":
			return r.sc.Int(&l.Link)
		case "up":
			return r.sc.Bool(&l.Up)
		case "remote_pci_bus_id":
			return r.detailString(&l.RemoteBusID)
		case "to_switch":
			return r.sc.Bool(&l.ToSwitch)
		case "gbps":
			return r.sc.Float(&l.GBps)
		}
		return r.sc.Skip()
	})
}

// migs reads a GPU's MIG devices (kept only with detail).
func (r metaReader) migs(g *hwtopo.GPU) error {
	var devs []hwtopo.MIGDevice
	err := listOf(r, &devs, func(d *hwtopo.MIGDevice) error {
		return r.object(func(key string) error {
			switch key {
			case "uuid":
				return r.sc.String(&d.UUID)
			case "gi":
				return r.sc.Int(&d.GI)
			case "ci":
				return r.sc.Int(&d.CI)
			case "profile":
				return r.sc.String(&d.Profile)
			}
			return r.sc.Skip()
		})
	})
	if r.detail {
		g.MIG = devs
	}
	return err
}

// host reads the machine around the GPUs.
func (r metaReader) host(h *hwtopo.Host) error {
	return r.object(func(key string) error {
		switch key {
		case "sockets":
			return r.sc.Int(&h.Sockets)
		case "numa_nodes":
			return listOf(r, &h.NUMANodes, func(n *hwtopo.NUMANode) error {
				return r.object(func(key string) error {
					switch key {
					case "id":
						return r.sc.Int(&n.ID)
					case "cpus":
						return r.sc.String(&n.CPUs)
					case "memory_bytes":
						return r.sc.Int64(&n.MemoryBytes)
					}
					return r.sc.Skip()
				})
			})
		}
		return r.sc.Skip()
	})
}

// workloads reads a node's workloads (null: none).
func (r metaReader) workloads(dst *[]Workload) error {
	return listOf(r, dst, r.workload)
}

// workload reads one workload.
func (r metaReader) workload(w *Workload) error {
	return r.object(func(key string) error {
		switch key {
		case "id":
			return r.sc.String(&w.ID)
		case "name":
			return r.sc.String(&w.Name)
		case "kind":
			return r.sc.String(&w.Kind)
		case "state":
			return r.sc.String(&w.State)
		case "gpus":
			return listOf(r, &w.GPUs, r.sc.Int)
		case "gpu_uuids":
			return listOf(r, &w.GPUUUIDs, r.sc.String)
		case "gpu_count":
			return r.sc.Int(&w.GPUCount)
		case "gpu_memory_bytes":
			return r.sc.Uint64(&w.GPUMemoryBytes)
		case "pids":
			return listOf(r, &w.PIDs, r.sc.Int)
		case "cpus_allowed":
			return r.sc.String(&w.CPUsAllowed)
		case "sharing":
			return optional(r, &w.Sharing, r.sharing)
		case "work":
			return r.work(&w.Work)
		case "queue":
			return r.sc.String(&w.Queue)
		case "labels":
			return r.sc.StringMap(&w.Labels)
		case "intervals":
			return listOf(r, &w.Intervals, func(t *Tenure) error {
				return r.object(func(key string) error {
					switch key {
					case "start_s":
						return r.sc.Float(&t.StartS)
					case "end_s":
						return r.sc.Float(&t.EndS)
					}
					return r.sc.Skip()
				})
			})
		}
		return r.sc.Skip()
	})
}

// gpuMeta reads a GPU's small field into g; false for a key it does not know.
func (r metaReader) gpuMeta(g *GPU, key string) (bool, error) {
	switch key {
	case "uuid":
		return true, r.sc.String(&g.UUID)
	case "model":
		return true, r.sc.String(&g.Model)
	case "pci_bus_id":
		return true, r.sc.String(&g.PCIBusID)
	case "memory_total_bytes":
		return true, r.sc.Uint64(&g.MemoryTotalBytes)
	case "numa_node":
		return true, optional(r, &g.NUMANode, r.sc.Int)
	case "interval_s":
		return true, r.sc.Float(&g.IntervalS)
	case "unsupported":
		return true, listOf(r, &g.Unsupported, r.sc.String)
	case "mig":
		return true, optional(r, &g.MIG, r.mig)
	case "usage":
		return true, r.usage(&g.Usage)
	case "errors":
		return true, listOf(r, &g.Errors, func(e *SampleError) error {
			return r.object(func(key string) error {
				switch key {
				case "t":
					return r.sc.Float(&e.T)
				case "error":
					return r.sc.String(&e.Error)
				}
				return r.sc.Skip()
			})
		})
	}
	return false, nil
}

// mig reads a MIG device's identity.
func (r metaReader) mig(m *MIG) error {
	return r.object(func(key string) error {
		switch key {
		case "parent_uuid":
			return r.sc.String(&m.ParentUUID)
		case "profile":
			return r.sc.String(&m.Profile)
		case "gi":
			return r.sc.Int(&m.GI)
		case "ci":
			return r.sc.Int(&m.CI)
		}
		return r.sc.Skip()
	})
}

// fromRaw reads one value from raw, the bytes of a value at offset at of
// the input, by read; its errors are at their offsets in the input.
func fromRaw(raw []byte, at int64, read func(metaReader) error) error {
	sub := metaReader{sc: jsonscan.NewBuffer(bytes.NewReader(raw), make([]byte, 0, len(raw)+1))}
	err := read(sub)
	if err == nil {
		err = sub.sc.End()
	}
	if err != nil {
		return jsonscan.Shifted(err, at)
	}
	return nil
}
