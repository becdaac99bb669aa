// Package lab is the home of the project's measurement tools: servers, replays and harnesses
// that tests, `make eval` and `make bench` run against the product. No product package imports
// anything under native/lab, so nothing here ships in caskg; the tools may trade robustness
// for simplicity where only a test or a benchmark relies on them.
package lab
