import Testing

@testable import MPNModule

@Suite("Trigger expressions")
struct TriggerTests {
    let fields = ["stock_name", "last_price", "pct_change", "volume"]

    func eval(_ text: String, _ values: [String?]) throws -> Bool {
        try CompiledTrigger(text, fields: fields).evaluate(values)
    }

    func code(_ text: String) -> Int? {
        do {
            _ = try CompiledTrigger(text, fields: fields)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("the documented idiom with a named argument")
    func documentedIdiom() throws {
        #expect(try eval("Double.parseDouble(${last_price}) > 500.0", ["A", "500.5", "1", "10"]))
        #expect(try !eval("Double.parseDouble(${last_price}) > 500.0", ["A", "499.9", "1", "10"]))
        #expect(try eval("Double.parseDouble($[2]) > 500.0", ["A", "501", "1", "10"]))
        #expect(try eval("Double.parseDouble(LS_MPN_field2) >= 501", ["A", "501", "1", "10"]))
    }

    @Test("named arguments are normalized to indexed ones")
    func normalization() throws {
        let t = try CompiledTrigger("Double.parseDouble(${last_price}) > 5 && ${stock_name}.equals(\"X\")", fields: fields)
        #expect(t.normalizedText == "Double.parseDouble($[2]) > 5 && $[1].equals(\"X\")")
    }

    @Test("integer, long and float parsing with Java semantics")
    func parsing() throws {
        #expect(try eval("Integer.parseInt($[4]) == 10", ["A", "1", "1", "10"]))
        #expect(try eval("Integer.parseInt($[4]) == -10", ["A", "1", "1", "-10"]))
        #expect(try eval("Integer.parseInt($[4]) == 10", ["A", "1", "1", "+10"]))
        // NumberFormatException: not triggered.
        #expect(try !eval("Integer.parseInt($[4]) == 10", ["A", "1", "1", "10.0"]))
        #expect(try !eval("Integer.parseInt($[4]) > 0", ["A", "1", "1", " 10"]))
        #expect(try !eval("Integer.parseInt($[4]) > 0", ["A", "1", "1", "2147483648"]))
        #expect(try eval("Long.parseLong($[4]) == 2147483648L", ["A", "1", "1", "2147483648"]))
        #expect(try eval("Long.parseLong($[4]) < 0", ["A", "1", "1", "-9223372036854775808"]))
        #expect(try !eval("Long.parseLong($[4]) < 0", ["A", "1", "1", "-9223372036854775809"]))
        // Double.parseDouble trims and accepts suffixes, exponents, NaN, Infinity.
        #expect(try eval("Double.parseDouble($[2]) == 1500", ["A", " 1.5e3d ", "1", "1"]))
        #expect(try eval("Double.parseDouble($[2]) > 1e300", ["A", "Infinity", "1", "1"]))
        #expect(try !eval("Double.parseDouble($[2]) == Double.parseDouble($[2])", ["A", "NaN", "1", "1"]))
        #expect(try !eval("Double.parseDouble($[2]) > 0", ["A", "abc", "1", "1"]))
        #expect(try !eval("Double.parseDouble($[2]) > 0", ["A", "", "1", "1"]))
        #expect(try !eval("Double.parseDouble($[2]) > 0", ["A", "1,5", "1", "1"]))
        #expect(try eval("Float.parseFloat($[2]) == 0.1f", ["A", "0.1", "1", "1"]))
        #expect(try !eval("Float.parseFloat($[2]) == 0.1", ["A", "0.1", "1", "1"]), "float 0.1 widened differs from double 0.1")
        // null field: NullPointerException / NumberFormatException → false
        #expect(try !eval("Double.parseDouble($[2]) > 0", ["A", nil, "1", "1"]))
        #expect(try !eval("Integer.parseInt($[2]) > 0", ["A", nil, "1", "1"]))
    }

    @Test("integer versus floating-point arithmetic")
    func arithmetic() throws {
        #expect(try eval("7 / 2 == 3", []))
        #expect(try eval("7 / 2.0 == 3.5", []))
        #expect(try eval("-7 / 2 == -3", []))
        #expect(try eval("-7 % 3 == -1", []))
        #expect(try eval("7.5 % 2 == 1.5", []))
        #expect(try eval("2147483647 + 1 == -2147483648", []), "int overflow wraps")
        #expect(try eval("2147483647L + 1 == 2147483648L", []))
        #expect(try !eval("Integer.parseInt($[4]) / 0 == 0", ["A", "1", "1", "5"]), "ArithmeticException")
        #expect(try eval("Double.parseDouble($[2]) / 0 > 1e308", ["A", "5", "1", "1"]), "double / 0 is Infinity")
        #expect(try eval("1 + 2 * 3 - 4 == 3", []))
        #expect(try eval("(1 + 2) * 3 == 9", []))
        #expect(try eval("(int) 3.99 == 3 && (int) -3.99 == -3 && (long) 1e30 == 9223372036854775807L", []))
        #expect(try eval("Math.abs(-5) == 5 && Math.max(1, 2.5) == 2.5 && Math.min(3L, 2) == 2", []))
        #expect(try eval("Math.round(2.5) == 3 && Math.round(-2.5) == -2 && Math.floor(-1.5) == -2.0", []))
        #expect(try eval("Math.pow(2, 10) == 1024 && Math.sqrt(16) == 4", []))
        #expect(try eval("0x10 == 16 && 1_000 == 1000 && .5 == 0.5", []))
    }

    @Test("boolean operators, short circuit, ternary")
    func logic() throws {
        #expect(try eval("true && !false || false", []))
        // Short circuit: the right side would throw NumberFormatException.
        #expect(try eval("true || Integer.parseInt($[1]) > 0", ["x", "1", "1", "1"]))
        #expect(try !eval("false && Integer.parseInt($[1]) > 0", ["x", "1", "1", "1"]))
        #expect(try eval("(Double.parseDouble($[2]) > 10 ? \"high\" : \"low\").equals(\"high\")", ["A", "11", "1", "1"]))
        #expect(try eval("(Double.parseDouble($[2]) > 10 ? 1 : 2.5) == 2.5", ["A", "9", "1", "1"]))
    }

    @Test("String methods")
    func strings() throws {
        let row: [String?] = ["  Acme Corp ", "12", "-0.5", "100"]
        #expect(try eval("$[1].trim().equals(\"Acme Corp\")", row))
        #expect(try eval("$[1].trim().equalsIgnoreCase(\"ACME corp\")", row))
        #expect(try eval("$[1].trim().startsWith(\"Acme\") && $[1].trim().endsWith(\"Corp\")", row))
        #expect(try eval("$[1].contains(\"me C\") && !$[1].contains(\"zzz\")", row))
        #expect(try eval("$[1].length() == 12 && !$[1].isEmpty() && \"\".isEmpty()", row))
        #expect(try eval("$[1].trim().toUpperCase().equals(\"ACME CORP\") && $[1].trim().toLowerCase().equals(\"acme corp\")", row))
        #expect(try eval("$[3].startsWith(\"-\")", row))
        #expect(try eval("$[1].indexOf(\"Corp\") == 7 && $[1].trim().substring(0, 4).equals(\"Acme\")", row))
        #expect(try !eval("$[1].substring(20).isEmpty()", row), "StringIndexOutOfBoundsException")
        #expect(try eval("\"a\".compareTo(\"b\") < 0", row))
        #expect(try eval("(\"p=\" + $[2] + 1).equals(\"p=121\") && (\"\" + 1.0).equals(\"1.0\") && (\"\" + 1e7).equals(\"1.0E7\")", row))
        #expect(
            try eval(
                "(\"\" + 0.001).equals(\"0.001\") && (\"\" + 1.0E-4).equals(\"1.0E-4\") && (\"\" + 123456.5).equals(\"123456.5\")", row))
        #expect(try eval("String.valueOf(2 + 3).equals(\"5\") && (\"\" + null).equals(\"null\")", row))
        // Strings compare by content with ==, and null checks work.
        #expect(try eval("$[2] == \"12\" && $[2] != null && null == null", row))
        #expect(try eval("$[2].equals(\"12\") && !$[2].equals(12)", row))
        // Method on a null field: NullPointerException → false
        #expect(try !eval("$[1].equals(\"x\") || $[2].length() > 0", [nil, nil, nil, nil]))
        #expect(try eval("\"tab\\there\".length() == 8 && \"\\u0041\".equals(\"A\")", row))
    }

    @Test("syntax and type errors are 44")
    func syntaxErrors() {
        for bad in [
            "", "Double.parseDouble($[2]) >", "$[2] > 5", "1 + 2", "foo(1)", "System.exit(0) == 0",
            "Runtime.getRuntime().exec(\"x\") == null", "$[1].getClass() == null", "\"abc\".matches(\".*\")",
            "(1 < 2", "1 < 2)", "true ? 1 : \"a\"", "'c' == 'c'", "2147483648 > 0", "1 === 1", "a.b.c.d.e(1)",
            "while (true) {}", "new String(\"a\").equals(\"a\")", "$[1] + 1 > 0", "!5",
        ] {
            #expect(code(bad) == 44, "\(bad)")
        }
    }

    @Test("unknown argument names and indexes are 47")
    func argumentErrors() {
        #expect(code("Double.parseDouble(${nope}) > 1") == 47)
        #expect(code("Double.parseDouble($[0]) > 1") == 47)
        #expect(code("Double.parseDouble($[5]) > 1") == 47)
        #expect(code("Double.parseDouble(LS_MPN_field9) > 1") == 47)
        #expect(code("${LS_MPN_subscription_ID}.isEmpty()") == 47)
    }

    @Test("depth and size are bounded")
    func bounded() {
        let deep = String(repeating: "(", count: 200) + "true" + String(repeating: ")", count: 200)
        #expect(code(deep) == 44)
        let wide = Array(repeating: "1 < 2", count: 300).joined(separator: " && ")
        #expect(code(wide) == 44)
        #expect(code(String(repeating: "!", count: 1000) + "true") == 44)
        // Concatenation growth is capped at evaluation time (false, not a crash).
        let big = String(repeating: "x", count: 40_000)
        let grow = "($[1] + $[1] + $[1]).length() > 0"
        #expect(throws: JavaException.outOfBudget) {
            try CompiledTrigger(grow, fields: fields).evaluateThrowing([big, nil, nil, nil])
        }
    }

    @Test("regex allow-list for compatibility")
    func allowList() throws {
        let list = try TriggerAllowList(patterns: [#"Double\.parseDouble\(\$\[\d+\]\) [<>] [+-]?(\d*\.)?\d+"#])
        #expect(list.accepts("Double.parseDouble($[2]) > 500.0"))
        #expect(!list.accepts("Double.parseDouble($[2]) > 500.0 || true"))
        let none = try TriggerAllowList(patterns: [])
        #expect(!none.accepts("true"))
    }

    @Test("Java Double.toString layout")
    func doubleToString() {
        #expect(Java.toString(100.0) == "100.0")
        #expect(Java.toString(0.1) == "0.1")
        #expect(Java.toString(1234567.0) == "1234567.0")
        #expect(Java.toString(12345678.0) == "1.2345678E7")
        #expect(Java.toString(-0.00012) == "-1.2E-4")
        #expect(Java.toString(Double.nan) == "NaN")
        #expect(Java.toString(-Double.infinity) == "-Infinity")
        #expect(Java.toString(-0.0) == "-0.0")
        #expect(Java.toString(Float(0.1)) == "0.1")
        #expect(Java.toString(1e21) == "1.0E21")
    }
}
