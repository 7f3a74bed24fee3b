package settings

import (
	"fmt"
	"regexp"

	"github.com/VictoriaMetrics/metricsql"
	"gopkg.in/yaml.v3"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/internal/setting"
	"github.com/seedance/seedance/internal/table"
	"github.com/seedance/seedance/profile"
)

// WorkQuery is one entry of the configuration's units: (docs/units.md).
type WorkQuery = setting.WorkQuery

// unitKeys are the keys of one entry of the configuration's units:
// (docs/units.md, Counters you define).
var unitKeys = map[string]bool{"unit": true, "metric": true, "expr": true, "pod_label": true, "namespace_label": true, "job_label": true, "model_label": true}

// metricName is a Prometheus metric name.
var metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// labelName is a Prometheus label name.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// maxUnitQueries bounds the entries: each is a query per chunk of a read.
const maxUnitQueries = 64

// checkUnits checks the units: list of the config file at path: each
// entry a mapping of known keys, a unit of the documented form, exactly
// one of a metric name and a PromQL expression that parses, label names
// that are label names, and either a job label or pod and namespace ones.
func checkUnits(path string, n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return exit.Usagef("config %s:%d: units must be a list of counters (docs/units.md)", path, n.Line)
	}
	if len(n.Content) > maxUnitQueries {
		return exit.Usagef("config %s:%d: %d units, more than %d", path, n.Line, len(n.Content), maxUnitQueries)
	}
	for i, e := range n.Content {
		if err := checkUnit(e); err != nil {
			return exit.Usagef("config %s:%d: units[%d]: %s", path, e.Line, i, table.Flatten(err.Error()))
		}
	}
	return nil
}

// checkUnit checks one entry.
func checkUnit(e *yaml.Node) error {
	if e.Kind != yaml.MappingNode {
		return fmt.Errorf("a counter is a mapping of unit, metric or expr, and labels")
	}
	v := map[string]string{}
	for i := 0; i+1 < len(e.Content); i += 2 {
		k, val := e.Content[i].Value, e.Content[i+1]
		if !unitKeys[k] {
			return fmt.Errorf("unknown key %q (choose unit, metric, expr, pod_label, namespace_label, job_label, model_label)", k)
		}
		if val.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s must be a string", k)
		}
		v[k] = val.Value
	}
	if err := profile.CheckUnit(v["unit"]); err != nil {
		return err
	}
	switch {
	case (v["metric"] == "") == (v["expr"] == ""):
		return fmt.Errorf("give one of metric and expr")
	case v["metric"] != "" && !metricName.MatchString(v["metric"]):
		return fmt.Errorf("metric %q is not a metric name", v["metric"])
	case v["expr"] != "":
		if _, err := metricsql.Parse(v["expr"]); err != nil {
			return fmt.Errorf("expr does not parse as PromQL: %v", err)
		}
	}
	for _, k := range []string{"pod_label", "namespace_label", "job_label", "model_label"} {
		if l := v[k]; l != "" && !labelName.MatchString(l) {
			return fmt.Errorf("%s %q is not a label name", k, l)
		}
	}
	if v["job_label"] != "" && (v["pod_label"] != "" || v["namespace_label"] != "") {
		return fmt.Errorf("give job_label (a Slurm job) or pod_label and namespace_label (a pod), not both")
	}
	return nil
}
