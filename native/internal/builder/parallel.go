package builder

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallelBlock is how many consecutive items a worker takes at a time.
const parallelBlock = 32

// parallel calls work(k) for every k in [0, n) on a worker per core. Each worker gets its own
// work function from newWorker, so it can own scratch space; work must write only what
// belongs to k, which makes the result independent of scheduling. progress, when not nil, is
// called from the calling goroutine with the number of items done so far.
func parallel(n int, newWorker func() func(k int), progress func(done int)) {
	workers := max(1, min(runtime.GOMAXPROCS(0), (n+parallelBlock-1)/parallelBlock))
	var next atomic.Int64
	var wg sync.WaitGroup
	done := make(chan int, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work := newWorker()
			for {
				lo := int(next.Add(parallelBlock)) - parallelBlock
				if lo >= n {
					return
				}
				hi := min(n, lo+parallelBlock)
				for k := lo; k < hi; k++ {
					work(k)
				}
				done <- hi - lo
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	finished := 0
	for d := range done {
		finished += d
		if progress != nil {
			progress(finished)
		}
	}
}
