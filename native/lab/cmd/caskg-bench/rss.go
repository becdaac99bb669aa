package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// peakRSSMB is this process's peak resident set in MB. It reads VmHWM from /proc/self/status:
// getrusage's ru_maxrss outlives execve, so a child started from a large caskg-bench would
// report the parent's peak rather than its own. Where /proc is missing it falls back to
// getrusage.
func peakRSSMB() float64 {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		if kb, ok := statusKB(string(b), "VmHWM:"); ok {
			return float64(kb) / 1024
		}
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024
}

// statusKB reads the kB figure of the line starting with key in a /proc/PID/status text.
func statusKB(status, key string) (int64, bool) {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

// cpuSeconds is the user and system time this process has used so far, on every core.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
