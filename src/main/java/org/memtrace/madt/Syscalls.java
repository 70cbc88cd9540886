package org.memtrace.madt;

import java.util.Map;

/**
 * x86-64 system call names for the calls whose user buffers the kernel reads or writes, so a block line
 * says {@code read} rather than {@code syscall0}. Others fall back to {@code syscall<N>}.
 */
public final class Syscalls {
    private Syscalls() {}

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(0, "read"), Map.entry(1, "write"), Map.entry(2, "open"), Map.entry(4, "stat"),
            Map.entry(5, "fstat"), Map.entry(6, "lstat"), Map.entry(7, "poll"), Map.entry(13, "rt_sigaction"),
            Map.entry(14, "rt_sigprocmask"), Map.entry(16, "ioctl"), Map.entry(17, "pread64"),
            Map.entry(18, "pwrite64"), Map.entry(19, "readv"), Map.entry(20, "writev"), Map.entry(22, "pipe"),
            Map.entry(23, "select"), Map.entry(35, "nanosleep"), Map.entry(40, "sendfile"),
            Map.entry(42, "connect"), Map.entry(43, "accept"), Map.entry(44, "sendto"), Map.entry(45, "recvfrom"),
            Map.entry(46, "sendmsg"), Map.entry(47, "recvmsg"), Map.entry(49, "bind"), Map.entry(51, "getsockname"),
            Map.entry(52, "getpeername"), Map.entry(53, "socketpair"), Map.entry(54, "setsockopt"),
            Map.entry(55, "getsockopt"), Map.entry(59, "execve"), Map.entry(61, "wait4"), Map.entry(63, "uname"),
            Map.entry(78, "getdents"), Map.entry(79, "getcwd"), Map.entry(89, "readlink"),
            Map.entry(96, "gettimeofday"), Map.entry(97, "getrlimit"), Map.entry(98, "getrusage"),
            Map.entry(99, "sysinfo"), Map.entry(100, "times"), Map.entry(202, "futex"),
            Map.entry(217, "getdents64"), Map.entry(228, "clock_gettime"), Map.entry(232, "epoll_wait"),
            Map.entry(257, "openat"), Map.entry(262, "newfstatat"), Map.entry(267, "readlinkat"),
            Map.entry(270, "pselect6"), Map.entry(271, "ppoll"), Map.entry(281, "epoll_pwait"),
            Map.entry(288, "accept4"), Map.entry(293, "pipe2"), Map.entry(295, "preadv"), Map.entry(296, "pwritev"),
            Map.entry(299, "recvmmsg"), Map.entry(302, "prlimit64"), Map.entry(307, "sendmmsg"),
            Map.entry(310, "process_vm_readv"), Map.entry(311, "process_vm_writev"),
            Map.entry(318, "getrandom"), Map.entry(326, "copy_file_range"), Map.entry(327, "preadv2"),
            Map.entry(328, "pwritev2"), Map.entry(332, "statx"));

    public static String name(int number) {
        String n = NAMES.get(number);
        return n != null ? n : "syscall" + number;
    }
}
