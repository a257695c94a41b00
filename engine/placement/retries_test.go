package placement

// Retries counts requests sent again after a 5xx or a dropped connection.
func (c *Client) Retries() int64 { return c.retries.Load() }
