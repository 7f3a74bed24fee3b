// Package charttest renders seedance's Helm chart (deploy/helm/seedance)
// with Helm's own engine and decodes every object strictly with the
// Kubernetes API types: no unknown field, no duplicate key. It is a module
// of its own, so that Helm and the Kubernetes API stay out of seedance's
// dependencies; .ci/run runs it.
package charttest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite deploy/kubernetes/seedance.yaml")

// render renders the chart with values over its defaults, as
// `helm template seedance deploy/helm/seedance -n seedance` does.
func render(t *testing.T, values map[string]any) string {
	t.Helper()
	ch, err := loader.Load("../helm/seedance")
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "seedance", Namespace: "seedance", IsInstall: true, Revision: 1}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for name := range out {
		files = append(files, name)
	}
	sort.Strings(files)
	var b strings.Builder
	for _, name := range files {
		if strings.HasSuffix(name, ".tpl") || strings.TrimSpace(out[name]) == "" {
			continue
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", strings.TrimPrefix(name, "seedance/"), strings.TrimSpace(out[name]))
	}
	return b.String()
}

// objects decodes every document strictly into its Kubernetes type.
type objects struct {
	cronJob   *batchv1.CronJob
	configMap *corev1.ConfigMap
	account   *corev1.ServiceAccount
	claim     *corev1.PersistentVolumeClaim
	// The ledger's (ledger.enabled).
	deployment  *appsv1.Deployment
	service     *corev1.Service
	ledgerClaim *corev1.PersistentVolumeClaim
	// Reclaim's (reclaim.enabled): its CronJob, account and roles.
	reclaimJob     *batchv1.CronJob
	reclaimAccount *corev1.ServiceAccount
	roles          []*rbacv1.Role
	clusterRoles   []*rbacv1.ClusterRole
	bindings       int
	kinds          []string
}

func decode(t *testing.T, manifest string) objects {
	t.Helper()
	var o objects
	for _, doc := range strings.Split(manifest, "\n---\n") {
		doc = strings.TrimPrefix(doc, "---\n")
		if strings.TrimSpace(doc) == "" {
			continue
		}
		js, err := yaml.YAMLToJSONStrict([]byte(doc))
		if err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		var meta struct{ APIVersion, Kind string }
		if err := json.Unmarshal(js, &meta); err != nil {
			t.Fatal(err)
		}
		var into any
		switch meta.APIVersion + "/" + meta.Kind {
		case "batch/v1/CronJob":
			c := &batchv1.CronJob{}
			into = c
			if strings.Contains(doc, "component: reclaim") {
				o.reclaimJob = c
			} else {
				o.cronJob = c
			}
		case "rbac.authorization.k8s.io/v1/Role":
			r := &rbacv1.Role{}
			o.roles, into = append(o.roles, r), r
		case "rbac.authorization.k8s.io/v1/ClusterRole":
			r := &rbacv1.ClusterRole{}
			o.clusterRoles, into = append(o.clusterRoles, r), r
		case "rbac.authorization.k8s.io/v1/RoleBinding":
			o.bindings++
			into = &rbacv1.RoleBinding{}
		case "rbac.authorization.k8s.io/v1/ClusterRoleBinding":
			o.bindings++
			into = &rbacv1.ClusterRoleBinding{}
		case "v1/ConfigMap":
			o.configMap = &corev1.ConfigMap{}
			into = o.configMap
		case "v1/ServiceAccount":
			a := &corev1.ServiceAccount{}
			into = a
			if strings.Contains(doc, "component: reclaim") {
				o.reclaimAccount = a
			} else {
				o.account = a
			}
		case "v1/PersistentVolumeClaim":
			c := &corev1.PersistentVolumeClaim{}
			into = c
			if strings.Contains(doc, "component: ledger") {
				o.ledgerClaim = c
			} else {
				o.claim = c
			}
		case "apps/v1/Deployment":
			o.deployment = &appsv1.Deployment{}
			into = o.deployment
		case "v1/Service":
			o.service = &corev1.Service{}
			into = o.service
		default:
			t.Fatalf("unexpected object %s %s", meta.APIVersion, meta.Kind)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(into); err != nil {
			t.Fatalf("%s: %v\n%s", meta.Kind, err, doc)
		}
		o.kinds = append(o.kinds, meta.Kind)
	}
	return o
}

// TestChartDefaults: the default values render a CronJob that runs as
// non-root on a read-only root file system, with no Kubernetes API access;
// the plain manifests in deploy/kubernetes are this rendering.
func TestChartDefaults(t *testing.T) {
	manifest := render(t, nil)
	o := decode(t, manifest)
	if o.cronJob == nil || o.configMap == nil || o.account == nil || o.claim == nil {
		t.Fatalf("objects: %v", o.kinds)
	}
	spec := o.cronJob.Spec.JobTemplate.Spec.Template.Spec
	if o.cronJob.Spec.Schedule != "0 * * * *" || o.cronJob.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("schedule: %+v", o.cronJob.Spec)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken || o.account.AutomountServiceAccountToken == nil || *o.account.AutomountServiceAccountToken {
		t.Error("a service account token is mounted: seedance reads no Kubernetes API")
	}
	if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("pod security context: %+v", sc)
	}
	all := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	var names []string
	for _, c := range all {
		names = append(names, c.Name)
		sc := c.SecurityContext
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("container %s: security context %+v", c.Name, sc)
		}
	}
	if strings.Join(names, ",") != "profile,report-json,report-html,report-prom" {
		t.Errorf("containers: %v", names)
	}
	golden := "../kubernetes/seedance.yaml"
	want := "# seedance's CronJob as plain manifests: `helm template seedance deploy/helm/seedance\n# --namespace seedance` with the default values (deploy/charttest rewrites it with -update).\n# Edit prometheus.url (the profile container's --prometheus-url) before applying.\n" + manifest
	if *update {
		if err := os.WriteFile(golden, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(golden); err != nil || string(got) != want {
		t.Errorf("%s is not the default rendering (go test -update): %v", golden, err)
	}
}

// TestChartOptions: a Pushgateway, the textfile collector, a bearer token,
// rules, an existing claim; every object still decodes strictly.
func TestChartOptions(t *testing.T) {
	o := decode(t, render(t, map[string]any{
		"pushgateway": map[string]any{"url": "http://pushgateway.monitoring:9091"},
		"textfile":    map[string]any{"hostPath": "/var/lib/node_exporter/textfile"},
		"prometheus":  map[string]any{"bearerTokenSecret": "prom-token", "selector": `cluster="prod"`},
		"rules":       []any{map[string]any{"name": "quiet", "when": "util_pct < 10", "for": "30m", "suggest": map[string]any{"text": "{name} quiet"}}},
		"reports":     map[string]any{"existingClaim": "reports", "formats": []any{"json"}},
		"timeZone":    "Europe/Paris",
	}))
	if o.claim != nil {
		t.Error("a claim made beside an existing one")
	}
	spec := o.cronJob.Spec.JobTemplate.Spec.Template.Spec
	if len(spec.Containers) != 2 || spec.Containers[1].Name != "push" || !strings.Contains(strings.Join(spec.Containers[0].Args, " "), "--output /textfile/seedance.prom") {
		t.Errorf("containers: %+v", spec.Containers)
	}
	cfg := o.configMap.Data["config.yaml"]
	if !strings.Contains(cfg, "bearer_token_file: /var/run/seedance/token/token") || !strings.Contains(cfg, "name: quiet") {
		t.Errorf("config:\n%s", cfg)
	}
}

// TestJobRuns runs the job's containers' arguments with the seedance
// binary, in order, with the volumes as directories and the simulated
// cluster in place of Prometheus: the config file the chart writes loads,
// with its rules, and every report is written.
func TestJobRuns(t *testing.T) {
	o := decode(t, render(t, map[string]any{
		"rules":   []any{map[string]any{"name": "quiet", "when": "util_pct < 10", "suggest": map[string]any{"text": "{name} quiet"}}},
		"reports": map[string]any{"formats": []any{"json", "html", "markdown"}},
	}))
	dir := t.TempDir()
	bin := filepath.Join(dir, "seedance")
	if out, err := exec.Command("go", "-C", "../..", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	paths := strings.NewReplacer("/etc/seedance", filepath.Join(dir, "etc"), "/work", filepath.Join(dir, "work"), "/reports", filepath.Join(dir, "reports"))
	for _, d := range []string{"etc", "work", "reports"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "etc", "config.yaml"), []byte(o.configMap.Data["config.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := o.cronJob.Spec.JobTemplate.Spec.Template.Spec
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		args := make([]string, len(c.Args))
		for i, a := range c.Args {
			args[i] = paths.Replace(a)
		}
		if c.Name == "profile" {
			// The simulated cluster instead of Prometheus; the rest as written.
			i := indexOf(args, "prometheus")
			args = append(append(append([]string{}, args[:i]...), "sim"), args[i+3:]...)
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"HOME=" + dir, "TMPDIR=" + dir}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("container %s: seedance %s: %v\n%s", c.Name, strings.Join(args, " "), err, out)
		}
	}
	if dated, _ := filepath.Glob(filepath.Join(dir, "reports", "report-*T*Z.json")); len(dated) != 1 {
		t.Errorf("dated copies of the JSON report: %v", dated)
	}
	for _, f := range []string{"reports/report.json", "reports/report.html", "reports/report.markdown", "work/seedance.prom"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v", f, err)
		}
		if f == "reports/report.json" && !bytes.Contains(b, []byte(`"rule:quiet"`)) {
			t.Errorf("the rules of the chart's config did not apply")
		}
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// TestChartLedger: ledger.enabled adds a Deployment that runs analyze in
// loop mode with the ledger on a claim of its own, probed on /healthz and
// scraped through a Service; with a DSN Secret (PostgreSQL) the URL comes
// from the Secret and no claim is made. Its arguments, run once with the
// simulated cluster in place of Prometheus, keep the ledger.
func TestChartLedger(t *testing.T) {
	o := decode(t, render(t, map[string]any{"ledger": map[string]any{"enabled": true}}))
	if o.deployment == nil || o.service == nil || o.ledgerClaim == nil {
		t.Fatalf("objects: %v", o.kinds)
	}
	d := o.deployment.Spec
	c := d.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--every 5m", "--listen :9464", "--ledger /var/lib/seedance/ledger.db", "--pushdown", "--duration 1h"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if *d.Replicas != 1 || d.Strategy.Type != appsv1.RecreateDeploymentStrategyType || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" ||
		c.ReadinessProbe == nil || o.service.Spec.Ports[0].Port != 9464 || d.Template.Spec.Volumes[2].PersistentVolumeClaim == nil {
		t.Errorf("deployment: %+v", d)
	}
	if sc := c.SecurityContext; sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation {
		t.Errorf("security context: %+v", sc)
	}
	named := decode(t, render(t, map[string]any{"ledger": map[string]any{"enabled": true, "cluster": "prod-eu"}}))
	if args := strings.Join(named.deployment.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--cluster prod-eu") || strings.Contains(strings.Join(c.Args, " "), "--cluster") {
		t.Errorf("ledger.cluster: %s", args)
	}
	pg := decode(t, render(t, map[string]any{"ledger": map[string]any{"enabled": true, "dsnSecret": "ledger-dsn"}}))
	pc := pg.deployment.Spec.Template.Spec.Containers[0]
	if pg.ledgerClaim != nil || strings.Contains(strings.Join(pc.Args, " "), "--ledger") || len(pc.Env) != 1 || pc.Env[0].Name != "SEEDANCE_LEDGER_DSN" ||
		pc.Env[0].ValueFrom.SecretKeyRef.Name != "ledger-dsn" || pc.Env[0].ValueFrom.SecretKeyRef.Key != "dsn" {
		t.Errorf("with PostgreSQL: claim %v, container %+v", pg.ledgerClaim != nil, pc)
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "seedance")
	if out, err := exec.Command("go", "-C", "../..", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, d := range []string{"etc", "data"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "etc", "config.yaml"), []byte(o.configMap.Data["config.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := strings.NewReplacer("/etc/seedance", filepath.Join(dir, "etc"), "/var/lib/seedance", filepath.Join(dir, "data"))
	var run []string
	for i := 0; i < len(c.Args); i++ {
		a := paths.Replace(c.Args[i])
		switch a {
		case "--every", "--listen", "--prometheus-url": // once, without a server
			i++
			continue
		case "--pushdown":
			continue
		case "prometheus":
			a = "sim"
		}
		run = append(run, a)
	}
	cmd := exec.Command(bin, run...)
	cmd.Env = []string{"HOME=" + dir, "TMPDIR=" + dir}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), ": settled ") {
		t.Fatalf("seedance %s: %v\n%s", strings.Join(run, " "), err, out)
	}
	out, err := exec.Command(bin, "ledger", "report", "--ledger", filepath.Join(dir, "data", "ledger.db"), "-f", "json").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"idle_gpu_hours"`) {
		t.Fatalf("ledger report: %v\n%s", err, out)
	}
}

// TestChartReclaim: reclaim is off by default; on, it is a CronJob that
// runs a dry run until execute, through an account of its own whose
// roles hold exactly the verbs reclaim acts with (a Role per namespace it
// is limited to, else a ClusterRole); without a PostgreSQL ledger the
// chart refuses to render.
func TestChartReclaim(t *testing.T) {
	if o := decode(t, render(t, nil)); o.reclaimJob != nil || o.reclaimAccount != nil || len(o.roles)+len(o.clusterRoles)+o.bindings != 0 {
		t.Fatalf("reclaim is on by default: %v", o.kinds)
	}
	on := map[string]any{"ledger": map[string]any{"enabled": true, "dsnSecret": "ledger-dsn"},
		"reclaim": map[string]any{"enabled": true, "alertmanagerUrl": "http://am:9093", "webhookSecret": "slack"}}
	o := decode(t, render(t, on))
	if o.reclaimJob == nil || o.reclaimAccount == nil || len(o.clusterRoles) != 1 || len(o.roles) != 0 || o.bindings != 1 {
		t.Fatalf("objects: %v", o.kinds)
	}
	spec := o.reclaimJob.Spec.JobTemplate.Spec.Template.Spec
	c := spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"reclaim --source prometheus", "--kubeconfig in-cluster", "--alertmanager-url http://am:9093", "--exclude-namespace kube-system", "--idle-for 2h --grace 1h"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "--execute") || spec.ServiceAccountName != "seedance-reclaim" || !*spec.AutomountServiceAccountToken {
		t.Errorf("a dry run by default through its own account: %q, %s", args, spec.ServiceAccountName)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
	}
	if env["SEEDANCE_LEDGER_DSN"] != "ledger-dsn/dsn" || env["SEEDANCE_RECLAIM_WEBHOOK_URL"] != "slack/url" {
		t.Errorf("env %v", env)
	}
	var verbs []string
	for _, r := range o.clusterRoles[0].Rules {
		for _, res := range r.Resources {
			verbs = append(verbs, res+":"+strings.Join(r.Verbs, ","))
		}
	}
	want := "deployments:get,patch statefulsets:get,patch replicasets:get,patch deployments/scale:get,patch statefulsets/scale:get,patch replicasets/scale:get,patch jobs:get,patch pods:get pods/eviction:create"
	if got := strings.Join(verbs, " "); got != want {
		t.Errorf("the role's verbs:\n%s\nwant\n%s", got, want)
	}
	on["reclaim"].(map[string]any)["scaleResources"] = []any{map[string]any{"apiGroup": "argoproj.io", "resource": "rollouts"}}
	if rules := decode(t, render(t, on)).clusterRoles[0].Rules; len(rules) != 6 || rules[5].APIGroups[0] != "argoproj.io" ||
		strings.Join(rules[5].Resources, " ") != "rollouts rollouts/scale" || strings.Join(rules[5].Verbs, ",") != "get,patch" {
		t.Errorf("a custom resource to scale: %+v", rules)
	}
	on["reclaim"].(map[string]any)["namespaces"] = []any{"ml", "research"}
	on["reclaim"].(map[string]any)["execute"] = true
	o = decode(t, render(t, on))
	if len(o.roles) != 2 || len(o.clusterRoles) != 0 || o.bindings != 2 || o.roles[0].Namespace != "ml" {
		t.Errorf("limited to two namespaces: %v", o.kinds)
	}
	if args := strings.Join(o.reclaimJob.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--namespace ml --namespace research") || !strings.Contains(args, "--execute") {
		t.Errorf("args %q", args)
	}
	ch, err := loader.Load("../helm/seedance")
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, map[string]any{"reclaim": map[string]any{"enabled": true}}, chartutil.ReleaseOptions{Name: "seedance", Namespace: "seedance", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Render(ch, vals); err == nil || !strings.Contains(err.Error(), "needs ledger.dsnSecret") {
		t.Errorf("reclaim without PostgreSQL: %v", err)
	}
}
