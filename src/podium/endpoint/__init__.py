"""Rate OpenAI-compatible inference endpoints: load and latency (bench), reliability (monitor),
security (audit) and cost. The public load-generator API is :mod:`podium.endpoint.api`."""
