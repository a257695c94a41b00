// Package faultproxy is a reverse proxy for tests that puts a flaky
// network in front of a real service: it delays every answer by a random
// time in a range and answers a fraction of requests with 502, some
// before forwarding them and some after (the service acted, the answer
// is lost), as a load balancer in front of a struggling Placement does.
// It counts requests per path so tests can report their cost.
//
// It must never be used outside tests, nor change a request or an answer
// it lets through.
package faultproxy
