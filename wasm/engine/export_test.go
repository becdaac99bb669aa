package engine

// SetExactPPR makes e's queries propagate by power iteration run to convergence instead of
// forward push: the reference the engine's answers are held to (CheckExactPPR).
func (e *Engine) SetExactPPR(exact bool) { e.exactPPR = exact }
