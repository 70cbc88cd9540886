package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.event.Event;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.ProbeRun;

/** Real run-time addresses of a running probe program, named from the events the agent would send. */
class AddressSpaceTest {

    @TempDir
    static Path dir;
    static Path pie;
    static Path noPie;

    @BeforeAll
    static void compile() throws Exception {
        pie = Gcc.compile(dir, "probe.c", "probe-pie", "-g", "-fPIE", "-pie");
        noPie = Gcc.compile(dir, "probe.c", "probe-nopie", "-g", "-fno-pie", "-no-pie");
    }

    static AddressSpace spaceOf(ProbeRun run) {
        AddressSpace space = new AddressSpace();
        run.events().forEach(space::observe);
        return space;
    }

    @Test
    void namesFunctionsAndVariablesOfPieAndFixedAddressPrograms() throws Exception {
        for (Path program : new Path[] {pie, noPie}) {
            ProbeRun run = ProbeRun.of(program);
            AddressSpace space = spaceOf(run);
            String name = program.getFileName().toString();
            assertThat(space.moduleAt(run.address("helper")).name()).isEqualTo(name);
            assertThat(space.code(run.address("helper"))).isEqualTo("helper+0");
            assertThat(space.code(run.address("findDisparity") + 73)).isEqualTo("findDisparity+73");
            assertThat(space.object(run.address("table"))).isEqualTo("table+40");
            assertThat(space.object(run.address("counter_s"))).isEqualTo("counter_s+0");
            assertThat(space.object(run.address("scratch_s"))).isEqualTo("scratch_s+8");
            assertThat(space.region(run.address("table")).name()).isEqualTo(name);
        }
    }

    @Test
    void namesLibraryGlobalsAndFunctionsAndTheCopyRelocatedStdout() throws Exception {
        for (Path program : new Path[] {pie, noPie}) {
            ProbeRun run = ProbeRun.of(program);
            AddressSpace space = spaceOf(run);
            assertThat(space.object(run.address("stdout"))).isEqualTo("stdout+0");
            assertThat(space.region(run.address("stdout")).name()).isEqualTo(program.getFileName().toString());
            assertThat(space.object(run.address("stdout_file") + 8)).isEqualTo("_IO_2_1_stdout_+8");
            assertThat(space.region(run.address("stdout_file")).name()).isEqualTo("libc.so.6");
            if (program == pie) {
                assertThat(space.code(run.address("puts"))).isEqualTo("puts+0");
                assertThat(space.code(run.address("puts") + 20)).isEqualTo("puts+20");
            } else {
                // A fixed-address program takes &puts as its canonical PLT entry.
                assertThat(space.code(run.address("puts") + 6)).isEqualTo("puts@plt+6");
            }
        }
    }

    @Test
    void regionsComeFromTheMemoryMap() throws Exception {
        ProbeRun run = ProbeRun.of(pie);
        AddressSpace space = spaceOf(run);
        Event.Mapping heap = mapping(run, "[heap]");
        Event.Mapping stack = mapping(run, "[stack]");
        assertThat(space.region(heap.start() + 16)).isEqualTo(new AddressSpace.Region("[heap]", heap.start(), heap.end()));
        assertThat(space.region(stack.end() - 8).name()).isEqualTo("[stack]");
        assertThat(space.object(heap.start() + 16)).isNull();
        assertThat(space.region(8)).isNull();
        assertThat(space.code(8)).isEqualTo("0x8");
    }

    @Test
    void tracedRangesNameTheirKindAndAnonymousMemoryIsAnon() {
        AddressSpace space = new AddressSpace();
        space.observe(new Event.Mapping(1, 0x10000, 0x20000, 0, 3, true, ""));
        assertThat(space.region(0x10010).name()).isEqualTo("[anon]");
        space.observe(new Event.Range(1, true, 0x30000, 0x32000, Event.RegionKind.HEAP, 3));
        assertThat(space.region(0x31000)).isEqualTo(new AddressSpace.Region("[heap]", 0x30000, 0x32000));
        space.observe(new Event.Range(1, false, 0x31000, 0x32000, Event.RegionKind.HEAP, 3));
        assertThat(space.region(0x31000)).isNull();
        space.observe(new Event.Range(1, true, 0x18000, 0x19000, Event.RegionKind.ANON, 3));
        assertThat(space.region(0x18000).name()).isEqualTo("[anon]");
    }

    @Test
    void fileRangesAndFileMappingsAreNamedByTheFileWithFileOffsets() {
        AddressSpace space = new AddressSpace();
        space.observe(new Event.Mapping(1, 0x40000, 0x42000, 0x3000, 1, false, "/data/input.bin"));
        assertThat(space.region(0x40010)).isEqualTo(new AddressSpace.Region("input.bin", 0x3d000, 0x42000));
        space.observe(new Event.Range(1, true, 0x40000, 0x42000, Event.RegionKind.FILE, 1));
        assertThat(space.region(0x40010).name()).isEqualTo("input.bin");
        space.observe(new Event.Range(1, true, 0x50000, 0x51000, Event.RegionKind.FILE, 1));
        assertThat(space.region(0x50000).name()).isEqualTo("[file]");
    }

    @Test
    void codeOutsideModulesFollowsTheMemoryMap() {
        AddressSpace space = new AddressSpace();
        assertThat(space.code(0x90010)).isEqualTo("0x90010");
        space.observe(new Event.Mapping(1, 0x90000, 0x91000, 0, 5, false, ""));
        assertThat(space.code(0x90010)).isEqualTo("[anon]+0x10");
    }

    @Test
    void codeOutsideAnyFunctionIsNamedByModuleAndVirtualAddress() throws Exception {
        ProbeRun run = ProbeRun.of(pie);
        AddressSpace space = spaceOf(run);
        LoadedModule main = space.moduleAt(run.address("helper"));
        assertThat(space.code(main.base() + 0x10)).isEqualTo("probe-pie+0x10");
        ProbeRun fixed = ProbeRun.of(noPie);
        AddressSpace other = spaceOf(fixed);
        assertThat(other.code(0x400010)).isEqualTo("probe-nopie+0x400010");
    }

    @Test
    void codeBytesComeFromTheFile() throws Exception {
        ProbeRun run = ProbeRun.of(pie);
        AddressSpace space = spaceOf(run);
        LoadedModule main = space.moduleAt(run.address("findDisparity"));
        ByteBuffer bytes = space.bytesAt(run.address("findDisparity"), 15);
        ByteBuffer expected = ElfFile.read(pie).bytesAt(run.address("findDisparity") - main.bias(), 15);
        assertThat(bytes.remaining()).isEqualTo(15);
        assertThat(bytes).isEqualTo(expected);
        assertThat(space.bytesAt(run.address("puts"), 4).remaining()).isEqualTo(4);
        assertThat(space.bytesAt(8, 4).remaining()).isZero();
    }

    @Test
    void aFileWhoseBuildIdDiffersFromTheRecordingIsNotTrusted() throws Exception {
        ProbeRun run = ProbeRun.of(pie);
        AddressSpace space = new AddressSpace();
        for (var e : run.events()) {
            if (e instanceof Event.Module m && m.path().endsWith("libc.so.6")) {
                space.observe(new Event.Module(m.tid(), m.loadBias(), new byte[20], m.path()));
            } else {
                space.observe(e);
            }
        }
        assertThat(space.code(run.address("puts"))).startsWith("libc.so.6+0x");
        assertThat(space.codeBytes(run.address("puts"), 4)).isEmpty();
        assertThat(space.codeBytes(run.address("helper"), 4)).hasSize(4);
    }

    @Test
    void aFailedExecKeepsTheAddressSpace() throws Exception {
        ProbeRun run = ProbeRun.of(pie);
        AddressSpace space = spaceOf(run);
        long helper = run.address("helper");
        assertThat(space.code(helper)).isEqualTo("helper+0");
        int modules = space.modules().size();
        space.observe(new Event.Exit(1, Event.ExitKind.EXEC, 0, 0, 0, "/nonexistent"));
        assertThat(space.modules()).hasSize(modules);
        assertThat(space.code(helper)).isEqualTo("helper+0");
    }

    static Event.Mapping mapping(ProbeRun run, String path) {
        return run.events().stream().filter(e -> e instanceof Event.Mapping m && m.path().equals(path))
                .map(Event.Mapping.class::cast).findFirst().orElseThrow();
    }
}
