"""Exact counting: latency samples into HdrHistograms in bulk, a worker's recorder on the hot
path, and the lossless merge of worker outcomes into one result, judged for trust."""
