package source

import "github.com/seedance/seedance/profile"

// ServedCounter is a serving engine's counter of work done (docs/units.md,
// Sources): its metric, the unit it counts, the label naming the model
// ("": the server serves one), and the labels its series are summed over
// (a request counter split by why each request finished). A metric named
// NAME_sum is a histogram's sum.
type ServedCounter struct {
	Metric, Unit, ModelLabel string
	SumOver                  []string
}

// ServedCounters are the serving engines' counters seedance reads, from
// Prometheus or scraped from the servers.
var ServedCounters = []ServedCounter{
	// vLLM (v1 engine: docs/design/metrics.md).
	{Metric: "vllm:request_success_total", Unit: profile.UnitRequests, ModelLabel: "model_name", SumOver: []string{"finished_reason"}},
	{Metric: "vllm:prompt_tokens_total", Unit: profile.UnitInputTokens, ModelLabel: "model_name"},
	{Metric: "vllm:generation_tokens_total", Unit: profile.UnitOutputTokens, ModelLabel: "model_name"},
	// SGLang (docs.sglang.io, references/production_metrics).
	{Metric: "sglang:num_requests_total", Unit: profile.UnitRequests, ModelLabel: "model_name"},
	{Metric: "sglang:prompt_tokens_total", Unit: profile.UnitInputTokens, ModelLabel: "model_name"},
	{Metric: "sglang:generation_tokens_total", Unit: profile.UnitOutputTokens, ModelLabel: "model_name"},
	// Hugging Face TGI (reference/metrics): one model a server; its token
	// counts are histograms, whose _sum counts the tokens.
	{Metric: "tgi_request_success", Unit: profile.UnitRequests},
	{Metric: "tgi_request_input_length_sum", Unit: profile.UnitInputTokens},
	{Metric: "tgi_request_generated_tokens_sum", Unit: profile.UnitOutputTokens},
	// NVIDIA Triton (user_guide/metrics.md): requests, and inferences
	// (a batched request counts each).
	{Metric: "nv_inference_request_success", Unit: profile.UnitRequests, ModelLabel: "model", SumOver: []string{"version"}},
	{Metric: "nv_inference_count", Unit: "inferences", ModelLabel: "model", SumOver: []string{"version"}},
}
