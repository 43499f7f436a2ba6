package anomalies

// errnoText is glibc's strerror text for the errnos the catalogue injects,
// which is what strace prints in parentheses.
var errnoText = map[string]string{
	"EACCES":     "Permission denied",
	"EAGAIN":     "Resource temporarily unavailable",
	"EBUSY":      "Device or resource busy",
	"ECONNRESET": "Connection reset by peer",
	"EDQUOT":     "Disk quota exceeded",
	"EFBIG":      "File too large",
	"EINTR":      "Interrupted system call",
	"EINVAL":     "Invalid argument",
	"EIO":        "Input/output error",
	"ELOOP":      "Too many levels of symbolic links",
	"EMFILE":     "Too many open files",
	"ENOSPC":     "No space left on device",
	"EPERM":      "Operation not permitted",
	"EROFS":      "Read-only file system",
	"ETIMEDOUT":  "Connection timed out",
	"EXDEV":      "Invalid cross-device link",
}
