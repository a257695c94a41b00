package ops

// PlansComputed counts the plans the API has had computed.
func (o *Ops) PlansComputed() int {
	o.api.mu.Lock()
	defer o.api.mu.Unlock()
	return o.api.plans
}

// PluginHTTPRequests counts the plugin's requests to service by outcome.
func (m *Metrics) PluginHTTPRequests(service, outcome string) uint64 {
	return sampleCount(m.plugin.pluginHTTP.WithLabelValues(service, outcome))
}
