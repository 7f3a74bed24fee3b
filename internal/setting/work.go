package setting

// WorkQuery is one entry of the configuration's units: (docs/units.md): a
// counter of work done that the user defines, as a metric or a PromQL
// expression, the unit it counts, and the labels of its series that name
// the pod (namespace and pod) or the Slurm job, and the model. Package
// settings checks and decodes it; the sources read it (source.Env.Units).
type WorkQuery struct {
	Unit           string `mapstructure:"unit"`
	Metric         string `mapstructure:"metric"`
	Expr           string `mapstructure:"expr"`
	PodLabel       string `mapstructure:"pod_label"`
	NamespaceLabel string `mapstructure:"namespace_label"`
	JobLabel       string `mapstructure:"job_label"`
	ModelLabel     string `mapstructure:"model_label"`
}
