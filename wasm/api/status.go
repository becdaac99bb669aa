package api

// The statuses the API answers with, as numbers: the core does not import net/http, whose
// types and server would be most of the edge worker's program.
const (
	statusOK                    = 200
	statusNoContent             = 204
	statusBadRequest            = 400
	statusUnauthorized          = 401
	statusForbidden             = 403
	statusNotFound              = 404
	statusMethodNotAllowed      = 405
	statusRequestEntityTooLarge = 413
	statusUnsupportedMediaType  = 415
	statusTooManyRequests       = 429
	statusInternalServerError   = 500
	statusNotImplemented        = 501
)
