package tracer

import (
	"github.com/faultline/faultline/parser"
)

// The x86-64 syscall table: for each call strace decodes the way
// faultline needs, its argument kinds in order and how its result
// prints. Names come from sysnames_amd64.go; a call missing here prints
// by name with raw hex arguments.

type sig struct {
	args []kind
	ret  func(d *dec) *parser.Result
}

func a(k ...kind) []kind { return k }

var signatures = map[string]sig{
	// Files and descriptors.
	"open":            {a(kPath, kOpenFlags, kOpenMode), retFD},
	"openat":          {a(kDirFD, kPath, kOpenFlags, kOpenMode), retFD},
	"openat2":         {a(kDirFD, kPath, kOpenHow, kUlong), retFD},
	"creat":           {a(kPath, kMode), retFD},
	"close":           {a(kFD), nil},
	"read":            {a(kFD, kBufOut, kUlongOut), nil},
	"write":           {a(kFD, kBufIn, kUlong), nil},
	"pread64":         {a(kFD, kBufOut, kUlongOut, kLongOut), nil},
	"pwrite64":        {a(kFD, kBufIn, kUlong, kLong), nil},
	"readv":           {a(kFD, kIovecOut, kIovcntOut), nil},
	"writev":          {a(kFD, kIovecIn, kUlong), nil},
	"preadv":          {a(kFD, kIovecOut, kIovcntOut, kLongOut), nil},
	"pwritev":         {a(kFD, kIovecIn, kUlong, kLong), nil},
	"preadv2":         {a(kFD, kIovecOut, kIovcntOut, kLongOut, kRWFFlagsOut), nil},
	"pwritev2":        {a(kFD, kIovecIn, kUlong, kLong, kRWFFlags), nil},
	"lseek":           {a(kFD, kLong, kWhence), nil},
	"stat":            {a(kPath, kStatOut), nil},
	"lstat":           {a(kPath, kStatOut), nil},
	"fstat":           {a(kFD, kStatOut), nil},
	"newfstatat":      {a(kDirFD, kPath, kStatOut, kAtFlagsOut), nil},
	"statx":           {a(kDirFD, kPath, kStatxFlags, kStatxMask, kStatxOut), nil},
	"access":          {a(kPath, kAccessMode), nil},
	"faccessat":       {a(kDirFD, kPath, kAccessMode), nil},
	"faccessat2":      {a(kDirFD, kPath, kAccessMode, kFaccessatFlags), nil},
	"rename":          {a(kPath, kPath), nil},
	"renameat":        {a(kDirFD, kPath, kDirFD, kPath), nil},
	"renameat2":       {a(kDirFD, kPath, kDirFD, kPath, kRenameFlags), nil},
	"link":            {a(kPath, kPath), nil},
	"linkat":          {a(kDirFD, kPath, kDirFD, kPath, kAtFlags), nil},
	"symlink":         {a(kPath, kPath), nil},
	"symlinkat":       {a(kPath, kDirFD, kPath), nil},
	"unlink":          {a(kPath), nil},
	"unlinkat":        {a(kDirFD, kPath, kAtFlags), nil},
	"mkdir":           {a(kPath, kMode), nil},
	"mkdirat":         {a(kDirFD, kPath, kMode), nil},
	"rmdir":           {a(kPath), nil},
	"chmod":           {a(kPath, kMode), nil},
	"fchmod":          {a(kFD, kMode), nil},
	"fchmodat":        {a(kDirFD, kPath, kMode), nil},
	"chown":           {a(kPath, kInt, kInt), nil},
	"fchown":          {a(kFD, kInt, kInt), nil},
	"lchown":          {a(kPath, kInt, kInt), nil},
	"fchownat":        {a(kDirFD, kPath, kInt, kInt, kAtFlags), nil},
	"utimensat":       {a(kDirFD, kPath, kUtimes, kAtFlags), nil},
	"truncate":        {a(kPath, kLong), nil},
	"ftruncate":       {a(kFD, kLong), nil},
	"fallocate":       {a(kFD, kFallocMode, kLong, kLong), nil},
	"fsync":           {a(kFD), nil},
	"fdatasync":       {a(kFD), nil},
	"sync":            {a(), nil},
	"syncfs":          {a(kFD), nil},
	"sync_file_range": {a(kFD, kLong, kLong, kSyncRangeFlags), nil},
	"getdents64":      {a(kFD, kDirents, kUintOut), nil},
	"getdents":        {a(kFD, kDirents, kUintOut), nil},
	"readlink":        {a(kPath, kPathOut, kUlongOut), nil},
	"readlinkat":      {a(kDirFD, kPath, kPathOut, kUlongOut), nil},
	"dup":             {a(kFD), retFD},
	"dup2":            {a(kFD, kFD), retFD},
	"dup3":            {a(kFD, kFD, kFdFlags), retFD},
	"fcntl":           {a(kFD, kFcntlCmd, kFcntlArg), retFcntl},
	"ioctl":           {a(kFD, kIoctlReq, kIoctlArg), nil},
	"flock":           {a(kFD, kFlockOp), nil},
	"copy_file_range": {a(kFD, kOffsetIn, kFD, kOffsetIn, kUlong, kUint), nil},
	"sendfile":        {a(kFD, kFD, kOffsetInOut, kUlong), nil},
	"setxattr":        {a(kPath, kCStr, kXattrValIn, kUlong, kXattrFlags), nil},
	"lsetxattr":       {a(kPath, kCStr, kXattrValIn, kUlong, kXattrFlags), nil},
	"fsetxattr":       {a(kFD, kCStr, kXattrValIn, kUlong, kXattrFlags), nil},
	"getxattr":        {a(kPath, kCStr, kXattrValOut, kUlongOut), nil},
	"lgetxattr":       {a(kPath, kCStr, kXattrValOut, kUlongOut), nil},
	"fgetxattr":       {a(kFD, kCStr, kXattrValOut, kUlongOut), nil},
	"listxattr":       {a(kPath, kXattrListOut, kUlongOut), nil},
	"llistxattr":      {a(kPath, kXattrListOut, kUlongOut), nil},
	"flistxattr":      {a(kFD, kXattrListOut, kUlongOut), nil},
	"removexattr":     {a(kPath, kCStr), nil},
	"lremovexattr":    {a(kPath, kCStr), nil},
	"fremovexattr":    {a(kFD, kCStr), nil},
	"getcwd":          {a(kPathOut, kUlongOut), nil},
	"chdir":           {a(kPath), nil},
	"fchdir":          {a(kFD), nil},
	"chroot":          {a(kPath), nil},
	"umask":           {a(kMode), retOct},
	"mknod":           {a(kPath, kSymMode, kDev), nil},
	"mknodat":         {a(kDirFD, kPath, kSymMode, kDev), nil},
	"statfs":          {a(kPath, kStatfsOut), nil},
	"fstatfs":         {a(kFD, kStatfsOut), nil},
	"pipe":            {a(kPipeFds), nil},
	"pipe2":           {a(kPipeFds, kFdFlagsOut), nil},
	"fadvise64":       {a(kFD, kLong, kLong, kFadvice), nil},
	"mount":           {a(kPath, kPath, kCStr, kHex, kPtr), nil},
	"umount2":         {a(kPath, kUmountFlags), nil},
	"inotify_init1":   {a(kFdFlags), retFD},
	"eventfd2":        {a(kUint, kFdFlags), retFD},
	"memfd_create":    {a(kCStr, kMemfdFlags), retFD},

	// Sockets.
	"socket":      {a(kFamily, kSockType, kSockProto), retFD},
	"socketpair":  {a(kFamily, kSockType, kSockProto, kPipeFds), nil},
	"connect":     {a(kFD, kSockaddrIn, kUint), nil},
	"bind":        {a(kFD, kSockaddrIn, kUint), nil},
	"listen":      {a(kFD, kInt), nil},
	"accept":      {a(kFD, kSockaddrOut, kSocklen), retFD},
	"accept4":     {a(kFD, kSockaddrOut, kSocklen, kSockFlagsOut), retFD},
	"getsockname": {a(kFD, kSockaddrOut, kSocklen), nil},
	"getpeername": {a(kFD, kSockaddrOut, kSocklen), nil},
	"sendto":      {a(kFD, kBufIn, kUlong, kMsgFlags, kSockaddrIn, kUint), nil},
	"recvfrom":    {a(kFD, kBufOut, kUlongOut, kMsgFlagsOut, kSockaddrOut, kSocklen), nil},
	"sendmsg":     {a(kFD, kMsghdrIn, kMsgFlags), nil},
	"recvmsg":     {a(kFD, kMsghdrOut, kMsgFlagsOut), nil},
	"shutdown":    {a(kFD, kShutHow), nil},

	// Polling and time.
	"poll":            {a(kPollfds, kUint, kInt), retPoll},
	"ppoll":           {a(kPollfds, kUint, kTimespec, kSigsetPpoll, kUlong), retPoll},
	"select":          {a(kInt, kFdset, kFdset, kFdset, kTimevalIn), retSelect},
	"pselect6":        {a(kInt, kFdset, kFdset, kFdset, kTimespec, kPselectMask), retSelect},
	"clock_gettime":   {a(kClockID, kTimespecOut), nil},
	"clock_getres":    {a(kClockID, kTimespecOut), nil},
	"gettimeofday":    {a(kTimevalOut, kPtrOut), nil},
	"time":            {a(kTimeOut), retTime},
	"nanosleep":       {a(kTimespec, kRemain), nil},
	"clock_nanosleep": {a(kClockID, kTimerFlags, kTimespec, kRemain), nil},

	// Memory.
	"mmap":     {a(kPtr, kUlong, kProt, kMapFlags, kFD, kHex), retHex},
	"munmap":   {a(kPtr, kUlong), nil},
	"mprotect": {a(kPtr, kUlong, kProt), nil},
	"brk":      {a(kPtr), retHex},
	"madvise":  {a(kPtr, kUlong, kMadvice), nil},
	"mremap":   {a(kPtr, kUlong, kUlong, kMremapFlags, kPtr), retHex},
	"msync":    {a(kPtr, kUlong, kMsyncFlags), nil},

	// Processes and signals.
	"clone":             {a(kCloneStack, kCloneFlags, kCloneParentTid, kCloneTLS, kCloneChildTid), nil},
	"clone3":            {a(kClone3, kUlong), nil},
	"fork":              {a(), nil},
	"vfork":             {a(), nil},
	"execve":            {a(kPath, kArgv, kEnvp), nil},
	"execveat":          {a(kDirFD, kPath, kArgv, kEnvp, kAtFlags), nil},
	"wait4":             {a(kInt, kWaitStatus, kWaitOptionsOut, kRusage), nil},
	"exit":              {a(kInt), nil},
	"exit_group":        {a(kInt), nil},
	"kill":              {a(kInt, kSignal), nil},
	"tkill":             {a(kInt, kSignal), nil},
	"tgkill":            {a(kInt, kInt, kSignal), nil},
	"rt_sigaction":      {a(kSignal, kSigactionIn, kSigactionOut, kUlongOut), nil},
	"rt_sigprocmask":    {a(kSigHow, kSigsetIn, kSigsetOut, kUlongOut), nil},
	"rt_sigreturn":      {a(kSigreturnMask), nil},
	"rt_sigsuspend":     {a(kSigsetIn, kUlong), nil},
	"rt_sigpending":     {a(kSigsetOut, kUlongOut), nil},
	"getrandom":         {a(kRandomOut, kUlongOut, kGrndFlagsOut), nil},
	"prlimit64":         {a(kInt, kRlimitRes, kRlimitIn, kRlimitOut), nil},
	"getrlimit":         {a(kRlimitRes, kRlimitOut), nil},
	"setrlimit":         {a(kRlimitRes, kRlimitIn), nil},
	"futex":             {a(kPtr, kFutexOp, futexArg(2), futexArg(3), futexArg(4), futexArg(5)), nil},
	"arch_prctl":        {a(kArchPrctlCode, kArchPrctlArg), nil},
	"set_tid_address":   {a(kPtr), nil},
	"set_robust_list":   {a(kPtr, kUlong), nil},
	"rseq":              {a(kPtr, kIntX, kInt, kIntX), nil},
	"sched_getaffinity": {a(kInt, kUint, kCPUSet), nil},
	"uname":             {a(kUname), nil},
	"getpid":            {a(), nil}, "getppid": {a(), nil}, "gettid": {a(), nil},
	"getuid": {a(), nil}, "geteuid": {a(), nil}, "getgid": {a(), nil}, "getegid": {a(), nil},
	"getpgrp": {a(), nil}, "setsid": {a(), nil}, "sched_yield": {a(), nil}, "pause": {a(), nil},
	"setpgid": {a(kInt, kInt), nil}, "getpgid": {a(kInt), nil}, "getsid": {a(kInt), nil},
	"setuid": {a(kInt), nil}, "setgid": {a(kInt), nil},
}

// table is indexed by syscall number.
var table = func() [len(sysNames)]*sysent {
	var t [len(sysNames)]*sysent
	for nr, name := range sysNames {
		if s, ok := signatures[name]; ok {
			t[nr] = &sysent{name: name, args: s.args, ret: s.ret}
		}
	}
	return t
}()

// Out-flavoured variants of in kinds: arguments that follow an
// out-argument are printed at exit with it.
var (
	kLongOut        = outOf(kLong)
	kUintOut        = outOf(kUint)
	kAtFlagsOut     = outOf(kAtFlags)
	kFdFlagsOut     = outOf(kFdFlags)
	kMsgFlagsOut    = outOf(kMsgFlags)
	kGrndFlagsOut   = outOf(kGrndFlags)
	kWaitOptionsOut = outOf(kWaitOptions)
	kSockFlagsOut   = outOf(flagKind32(flagSet{{0x80000, "SOCK_CLOEXEC"}, {0x800, "SOCK_NONBLOCK"}}, ""))
	kRWFFlags       = flagKind32(flagSet{{1, "RWF_HIPRI"}, {2, "RWF_DSYNC"}, {4, "RWF_SYNC"}, {8, "RWF_NOWAIT"}, {0x10, "RWF_APPEND"}}, "")
	kRWFFlagsOut    = outOf(kRWFFlags)
	kPtrOut         = kOutPtr
	kMemfdFlags     = flagKind32(flagSet{{1, "MFD_CLOEXEC"}, {2, "MFD_ALLOW_SEALING"}, {4, "MFD_HUGETLB"}, {8, "MFD_NOEXEC_SEAL"}, {0x10, "MFD_EXEC"}}, "")
	kMremapFlags    = flagKind32(flagSet{{1, "MREMAP_MAYMOVE"}, {2, "MREMAP_FIXED"}, {4, "MREMAP_DONTUNMAP"}}, "")
	kMsyncFlags     = flagKind32(flagSet{{1, "MS_ASYNC"}, {2, "MS_INVALIDATE"}, {4, "MS_SYNC"}}, "")
	kTimevalIn      = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.timeval(d.arg(i))) }}
	kSigsetPpoll    = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.sigset(d.arg(i), d.arg(4))) }}
)

// outOf prints an in kind at exit.
func outOf(k kind) kind {
	return kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg { return k.in(d, i) }}
}
