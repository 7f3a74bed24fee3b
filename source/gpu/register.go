package gpu

import (
	"strings"

	"github.com/seedance/seedance/internal/setting"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/source"
)

// Settings are the nvml section of seedance's configuration.
type Settings struct {
	NodeName string `mapstructure:"node_name"` // the host name when empty
	ProcRoot string `mapstructure:"proc_root"`
	PodsDir  string `mapstructure:"pods_dir"`
	SysRoot  string `mapstructure:"sys_root"`
}

// keys are the source's settings, its section of the configuration
// (docs/configuration.md).
var keys = []setting.Key{
	{Key: "nvml.node_name", Default: "", Cmd: "profile analyze", Flag: "node-name", Help: "node name to record (default: the host name)", DocDefault: "host name"},
	{Key: "nvml.proc_root", Default: "/proc", Help: "procfs mount, for process names and pod cgroups"},
	{Key: "nvml.pods_dir", Default: "/var/log/pods", Help: "kubelet pod log directory, for pod names"},
	{Key: "nvml.sys_root", Default: "/sys", Help: "sysfs mount, for each GPU's NUMA node"},
}

func init() {
	source.Register(source.Registration{Name: "nvml", Wraps: true, Open: open, Settings: Settings{}, Keys: keys})
}

// open opens this node's GPUs through NVML, with the host's NUMA layout in
// the profile's topology (without it the GPU side still goes in).
func open(env source.Env) (source.Profiler, error) {
	var s Settings
	if err := env.Settings("nvml", &s); err != nil {
		return nil, err
	}
	lib, err := env.NVML()
	if err != nil {
		return nil, err
	}
	host, herr := hwtopo.HostFromGHW(strings.TrimSuffix(s.SysRoot, "sys"))
	n, err := OpenNode(lib, NodeOptions{
		Name:     s.NodeName,
		Procs:    &ProcFS{ProcRoot: s.ProcRoot, PodsDir: s.PodsDir},
		SysRoot:  s.SysRoot,
		Timeout:  env.Interval * 9 / 10,
		Topology: true, Host: host,
	})
	if err != nil {
		return nil, err
	}
	if herr != nil && env.Log != nil {
		env.Log("host topology unknown: " + herr.Error())
	}
	return source.Sampled{Source: n}, nil
}
