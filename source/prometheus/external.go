package prometheus

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"gopkg.in/yaml.v3"
)

// externalCluster is the cluster external label of the server's global
// configuration (/api/v1/status/config: external_labels: {cluster: …}),
// which a Prometheus of one cluster of several carries but does not put
// in its query answers; "" when it has none or does not say (VictoriaMetrics,
// a query frontend, a user not allowed to read the configuration): the
// label is a default, so failing to read it is not an error.
func (c *promClient) externalCluster(ctx context.Context) string {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v1/status/config"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return ""
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	var ans struct {
		Data struct {
			YAML string `json:"yaml"`
		} `json:"data"`
	}
	if err := json.NewDecoder(&capped{r: resp.Body, left: 16 << 20}).Decode(&ans); err != nil {
		return ""
	}
	var cfg struct {
		Global struct {
			ExternalLabels map[string]string `yaml:"external_labels"`
		} `yaml:"global"`
	}
	if err := yaml.Unmarshal([]byte(ans.Data.YAML), &cfg); err != nil {
		return ""
	}
	return cfg.Global.ExternalLabels["cluster"]
}
