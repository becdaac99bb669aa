package engine

// SetExactPPR makes e's queries propagate by power iteration run to convergence instead of
// forward push: the reference the engine's answers are held to (CheckExactPPR).
func (e *Engine) SetExactPPR(exact bool) {
	e.exactPPR = nil
	if exact {
		e.exactPPR = func(pi, p, next []float64, gamma float64) ([]float64, int) {
			return e.powerIteration(pi, p, next, gamma, exactTolerance, exactIterations)
		}
	}
}
