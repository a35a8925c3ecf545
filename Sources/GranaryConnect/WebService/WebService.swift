import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A small JSON-over-HTTP client for actions and the outbox, on Foundation's `URLSession`.
///
/// `URLSession` is the client every Swift platform has (on Linux through FoundationNetworking and the
/// toolchain's libcurl), so GranaryConnect adds no dependency and no build time; `async-http-client`
/// would bring SwiftNIO and several minutes to every clean build for features (HTTP/2 pools, streaming
/// bodies) actions do not need. Requests are cancellable: cancelling the task of an async action
/// cancels its request.
public struct WebService: Sendable {
    /// The server's base address; request paths are relative to it.
    public var baseURL: URL
    /// Headers sent with every request (authorization, say).
    public var headers: [String: String]
    /// How long a request may take before it fails with `URLError.timedOut`.
    public var timeout: TimeInterval

    public init(baseURL: URL, headers: [String: String] = [:], timeout: TimeInterval = 30) {
        self.baseURL = baseURL
        self.headers = headers
        self.timeout = timeout
    }

    /// What a request that did not succeed says: the method, the URL, and the status or the failure.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var method: String
        public var url: URL
        /// The HTTP status, or nil when no answer came (the connection failed or was cut).
        public var status: Int?
        /// The answer's body (at most 1,000 bytes of it, as text), or the transport error.
        public var detail: String

        public var description: String {
            "\(method) \(url.absoluteString) " + (status.map { "answered \($0): \(detail)" } ?? "failed: \(detail)")
        }
    }

    /// Sends `request` and waits for the answer, blocking the calling thread: the seed's synchronous
    /// `webService.execute(request:)` for a synchronous action, which runs on a thread of its own. Never
    /// call it from a Swift concurrency task (it would hold one of the pool's few threads) or the main
    /// thread. A relative request URL is resolved against `baseURL`.
    /// - Returns: The body, the response and the transport error, as `URLSession`'s completion gives them.
    public func execute(request: URLRequest) -> (Data?, URLResponse?, (any Error)?) {
        var request = request
        if let url = request.url, url.scheme == nil { request.url = URL(string: url.relativeString, relativeTo: baseURL)?.absoluteURL }
        for (name, value) in headers where request.value(forHTTPHeaderField: name) == nil { request.setValue(value, forHTTPHeaderField: name) }
        request.timeoutInterval = timeout
        let answer = Mutex<(Data?, URLResponse?, (any Error)?)>((nil, nil, nil))
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            answer.withLock { $0 = (data, response, error) }
            done.signal()
        }.resume()
        done.wait()
        return answer.withLock { $0 }
    }

    /// A GET request for `path`, for `execute(request:)`.
    public func request(_ path: String, query: [String: String] = [:]) -> URLRequest {
        URLRequest(url: url(path, query), timeoutInterval: timeout)
    }

    /// GETs `path` and returns the body of a 2xx answer.
    /// - Throws: ``Failure`` for another status or no answer; `CancellationError` when the task was cancelled.
    public func get(_ path: String, query: [String: String] = [:]) async throws -> Data {
        try await send("GET", path, query: query, body: nil, extraHeaders: [:])
    }

    /// GETs `path` and decodes the JSON array of objects it answers (a feed page).
    /// - Throws: as `get(_:query:)`; ``Failure`` when the body is not a JSON array of objects.
    public func getJSONArray(_ path: String, query: [String: String] = [:]) async throws -> [[String: Any]] {
        let data = try await get(path, query: query)
        guard let array = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw Failure(method: "GET", url: url(path, query), status: 200, detail: "the body is not a JSON array of objects")
        }
        return array
    }

    /// POSTs a JSON object to `path` and returns the body of a 2xx answer.
    /// - Parameters:
    ///   - path: Relative to `baseURL`.
    ///   - json: What `JSONSerialization` can write.
    ///   - idempotencyKey: Sent as the `Idempotency-Key` header, so that a server applies a request it
    ///     receives twice (a retry after a lost answer) once.
    /// - Throws: as `get(_:query:)`.
    @discardableResult
    public func post(_ path: String, json: Any, idempotencyKey: String? = nil) async throws -> Data {
        let body = try JSONSerialization.data(withJSONObject: json)
        var extra = ["Content-Type": "application/json"]
        if let idempotencyKey { extra["Idempotency-Key"] = idempotencyKey }
        return try await send("POST", path, query: [:], body: body, extraHeaders: extra)
    }

    private func url(_ path: String, _ query: [String: String]) -> URL {
        var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) } }
        return components.url!
    }

    private func send(_ method: String, _ path: String, query: [String: String], body: Data?,
                      extraHeaders: [String: String]) async throws -> Data {
        let url = url(path, query)
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers.merging(extraHeaders, uniquingKeysWith: { _, new in new }) { request.setValue(value, forHTTPHeaderField: name) }
        let data: Data, response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw Failure(method: method, url: url, status: nil, detail: "\(error)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw Failure(method: method, url: url, status: status, detail: String(decoding: data.prefix(1_000), as: UTF8.self))
        }
        return data
    }
}

/// An outbox transport that POSTs each entry's ``OutboxEntry/jsonObject`` to one path of a web service,
/// with the entry's idempotency key as the `Idempotency-Key` header.
public struct WebServiceOutboxTransport: OutboxTransport {
    public var service: WebService
    public var path: String

    public init(service: WebService, path: String) {
        self.service = service
        self.path = path
    }

    public func send(_ entry: OutboxEntry) async throws {
        try await service.post(path, json: entry.jsonObject, idempotencyKey: entry.idempotencyKey)
    }
}
