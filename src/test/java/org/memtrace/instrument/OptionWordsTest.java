package org.memtrace.instrument;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class OptionWordsTest {
    @Test
    void blanksSeparateWords() {
        assertThat(OptionWords.split("  --omega\t0.25 \n--no-stack ")).containsExactly("--omega", "0.25", "--no-stack");
        assertThat(OptionWords.split("")).isEmpty();
        assertThat(OptionWords.split("   ")).isEmpty();
        assertThat(OptionWords.split(null)).isEmpty();
    }

    @Test
    void quotesAndBackslashesWorkAsInTheShell() {
        assertThat(OptionWords.split("--keep-asm '/tmp/my asm'")).containsExactly("--keep-asm", "/tmp/my asm");
        assertThat(OptionWords.split("--keep-asm \"/tmp/my asm\"")).containsExactly("--keep-asm", "/tmp/my asm");
        assertThat(OptionWords.split("--keep-asm /tmp/my\\ asm")).containsExactly("--keep-asm", "/tmp/my asm");
        assertThat(OptionWords.split("a'b c'd")).containsExactly("ab cd");
        assertThat(OptionWords.split("'it'\\''s'")).containsExactly("it's");
        assertThat(OptionWords.split("\"say \\\"hi\\\" \\\\ \\n\"")).containsExactly("say \"hi\" \\ \\n");
        assertThat(OptionWords.split("'a\\b' \"$HOME\"")).containsExactly("a\\b", "$HOME");
        assertThat(OptionWords.split("'' \"\"")).containsExactly("", "");
    }

    @Test
    void badQuotingIsOneClearLine() {
        assertThatThrownBy(() -> OptionWords.split("--keep-asm '/tmp/x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("unterminated ' quote at column 12 of '--keep-asm '/tmp/x'");
        assertThatThrownBy(() -> OptionWords.split("a \"b")).hasMessageStartingWith("unterminated \" quote at column 3");
        assertThatThrownBy(() -> OptionWords.split("a \"b\\\"")).hasMessageStartingWith("unterminated \" quote");
        assertThatThrownBy(() -> OptionWords.split("a\\")).hasMessageContaining("backslash ends");
    }

    @Test
    void joinReadsBackExactly() {
        List<String> words = List.of("--keep-asm", "/tmp/my asm", "it's", "", "a\"b\\c", "$x*", "--omega", "0.25", "tab\there");
        String joined = OptionWords.join(words);
        assertThat(OptionWords.split(joined)).isEqualTo(words);
        assertThat(OptionWords.join(List.of("--omega", "0.25", "--scores", "1,2,4"))).isEqualTo("--omega 0.25 --scores 1,2,4");
        assertThat(OptionWords.join(List.of("/tmp/my asm"))).isEqualTo("'/tmp/my asm'");
    }

    @Test
    void theRewriterReadsPathsWithBlanks() {
        CcOptions o = CcOptions.fromEnvironment(OptionWords.join(List.of("--omega", "0.5", "--keep-asm", "/tmp/my asm")));
        assertThat(o.keepAsm()).hasValueSatisfying(p -> assertThat(p.toString()).isEqualTo("/tmp/my asm"));
        assertThat(o.omega()).isEqualTo(0.5);
        assertThat(CcOptions.fromEnvironment("")).isEqualTo(CcOptions.DEFAULTS);
    }

    @Test
    void selectionWordsParseBackToTheSameSelection() {
        CcOptions o = CcOptions.parse(List.of("--omega", "0.1", "--no-stack", "--scores", "1,3,5", "--mode", "aia", "--keep-asm", "x"));
        CcOptions back = CcOptions.parse(o.selectionWords());
        assertThat(back.analysis()).isEqualTo(o.analysis());
        assertThat(back.omega()).isEqualTo(o.omega());
        assertThat(back.mode()).isEqualTo(o.mode());
        assertThat(o.selectionWords()).containsExactly("--omega", "0.1", "--chunk", "4096", "--scores", "1,3,5", "--mode", "aia", "--no-stack");
    }
}
