package recommend

import _ "embed" // the plans' shell fragments

// The plans' shell is bash kept in recommend/sh and embedded into the
// binary: the dialects' writers join these fragments and write only the
// plan's data between them (names quoted by shell.Quote for their
// position). TestScriptsPassShellcheck runs shellcheck over every kind of
// generated script.
var (
	//go:embed sh/args.sh
	argsSh string
	//go:embed sh/run.sh
	runSh string
	//go:embed sh/freshness.sh
	freshnessSh string
	//go:embed sh/kubectl.sh
	kubectlSh string
	//go:embed sh/kubectl_steps.sh
	kubectlStepsSh string
	//go:embed sh/slurm.sh
	slurmSh string
)
