/// The `admin` section of the configuration file (docs/CONFIG.md, docs/ADMIN.md):
/// `{"user": "…", "password": "…"}`, the administrator of the dashboard and the admin API.
extension AdminCredentials: Decodable {
    static let minPasswordLength = 8
    static let maxLength = 256

    /// Reads the `admin` object of the configuration file; unknown keys are errors.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(["user", "password"])
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        let user = try c.decode(String.self, forKey: AnyCodingKey(stringValue: "user"))
        let password = try c.decode(String.self, forKey: AnyCodingKey(stringValue: "password"))
        guard !user.isEmpty, user.utf8.count <= Self.maxLength, !user.contains(":"),
            !user.contains(where: { $0.isNewline })
        else {
            throw decoder.invalid(
                "expected a user name of 1 to \(Self.maxLength) bytes without ':' or line breaks",
                at: AnyCodingKey(stringValue: "user"))
        }
        guard password.count >= Self.minPasswordLength, password.utf8.count <= Self.maxLength else {
            throw decoder.invalid(
                "expected a password of \(Self.minPasswordLength) to \(Self.maxLength) characters",
                at: AnyCodingKey(stringValue: "password"))
        }
        self.init(user: user, password: password)
    }
}
