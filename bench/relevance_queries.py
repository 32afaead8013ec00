"""The labelled query set of the relevance benchmark, written for this project.

Each query is ``(q, {document: grade})``: grade 2 is what a person meant, 1 is also
relevant. Documents are frame ids, or ``"~text"`` for the event whose content contains
that text (resolved when the benchmark loads the corpus). The STATE-Bench group is not
here: its queries and labels come from the data (each test task's opening message; the
relevant documents are the train trajectories of the same domain and `task_type`).
"""

from __future__ import annotations

# -- demo context (memory/demo): what a person would type into the explorer's search -----
DEMO_QUERIES: list[tuple[str, dict[str, int]]] = [
    (
        "release",
        {
            "release": 2,
            "release-web": 1,
            "release-procedure": 1,
            "release-checklist": 1,
            "release-calendar": 1,
            "release-case-a": 1,
            "release-case-b": 1,
        },
    ),
    ("release procedure", {"release-procedure": 2, "release-case-a": 1, "release-case-b": 1}),
    (
        "how do we release the web package",
        {"release-web": 2, "release-case-b": 1, "web-package": 1, "command-differences": 1},
    ),
    (
        "source maps",
        {"sourcemap-policy": 2, "release-checklist": 1, "~no source maps found": 1},
    ),
    ("node version", {"node-version": 2, "node-22-migration": 1}),
    ("vite upgrade", {"vite-upgrade-plan": 2, "dependencies": 1}),
    ("error rate", {"monitor-error-rate": 2, "~error rate 0.1%": 1}),
    (
        "pnpm",
        {"pnpm-version": 2, "pnpm-upgrade": 1, "workspace-layout": 1, "command-differences": 1},
    ),
    ("rollback", {"rollback-plan": 2}),
    ("who can publish to the registry", {"publish-access": 2, "deploy-target": 1}),
    ("cdn cache", {"cdn-cache-check": 2, "~cdn cache hit ratio": 1}),
    ("发布流程", {"release-procedure": 2, "handoff-note": 1}),
    ("lockfile", {"lockfile-policy": 2, "pnpm-upgrade": 1}),
    (
        "cart rounding",
        {"cart-rounding-test": 2, "recent-changes": 1, "changelog-draft": 1},
    ),
    ("shop-web-1.0.0.tgz", {"release": 2, "~shop-web-1.0.0.tgz": 1}),
    ("user preferences language", {"user-preferences": 2}),
    ("did the tests pass", {"test-result": 2, "lint-result": 1, "web-lint": 1}),
    ("ci pipeline", {"ci-pipeline": 2, "node-22-migration": 1}),
    ("用户偏好", {"user-preferences": 2}),
    ("monitoring", {"monitor-error-rate": 2, "~monitoring: no new issues": 1}),
]

# -- multilingual: Korean, Chinese, Japanese, Thai, mixed ---------------------------------
MULTILINGUAL_DOCS: list[tuple[str, str]] = [
    ("ko-result", "테스트 결과를 확인했다. 모든 테스트가 통과했습니다."),
    ("ko-deploy-fail", "배포가 실패했습니다. 파이프라인 로그를 확인해 주세요."),
    ("ko-deploy-rerun", "배포 파이프라인을 다시 실행했고 이번에는 성공했다."),
    ("ko-meeting", "서울에서 회의가 있었습니다. 다음 회의는 부산에서 합니다."),
    ("ko-refund", "고객이 환불을 요청했습니다. 주문은 이미 배송되었습니다."),
    ("ko-order", "주문번호를 알려주시면 배송 상태를 확인해 드리겠습니다."),
    ("ko-db", "데이터베이스 연결이 끊어졌습니다. 재시도 중입니다."),
    ("ko-login", "로그인에 실패했습니다 (login failed for user admin)."),
    ("ko-conclusion", "결론은 다음 주에 내리기로 했다."),
    ("ko-password", "비밀번호를 변경하려면 설정 메뉴로 이동하세요."),
    ("zh-release", "用户要求：先暂停发布，等待确认。"),
    ("zh-tests", "测试结果已吸收，继续准备发布。"),
    ("zh-rollback", "回滚计划：重新部署上一个版本。"),
    ("zh-cache", "检查 CDN 缓存设置，确认缓存命中率。"),
    ("ja-tokyo", "東京都に住んでいます。"),
    ("ja-kyoto", "京都へ行きました。お寺を見ました。"),
    ("ja-test", "テストを実行しました。すべて成功です。"),
    ("ja-deploy", "本番環境へのデプロイが完了しました。"),
    ("th-test", "การทดสอบผ่านแล้ว"),
    ("th-hello", "สวัสดีครับ ยินดีต้อนรับ"),
    ("en-deploy", "Deployment to production finished without errors."),
    ("en-meeting", "The meeting in Seoul was moved to Busan."),
]

MULTILINGUAL_QUERIES: list[tuple[str, dict[str, int]]] = [
    ("결과", {"ko-result": 2}),
    ("테스트 결과", {"ko-result": 2}),
    ("배포", {"ko-deploy-fail": 2, "ko-deploy-rerun": 2}),
    ("배포 실패", {"ko-deploy-fail": 2, "ko-deploy-rerun": 1}),
    ("서울 회의", {"ko-meeting": 2, "en-meeting": 1}),
    ("환불 요청", {"ko-refund": 2}),
    ("주문번호", {"ko-order": 2}),
    ("데이터베이스 연결", {"ko-db": 2}),
    ("로그인 실패", {"ko-login": 2}),
    ("비밀번호 변경", {"ko-password": 2}),
    ("发布", {"zh-release": 2, "zh-tests": 1}),
    ("测试结果", {"zh-tests": 2}),
    ("回滚", {"zh-rollback": 2}),
    ("缓存", {"zh-cache": 2}),
    ("京都", {"ja-kyoto": 2}),
    ("東京", {"ja-tokyo": 2}),
    ("テスト", {"ja-test": 2}),
    ("デプロイ", {"ja-deploy": 2}),
    ("ทดสอบ", {"th-test": 2}),
    ("สวัสดี", {"th-hello": 2}),
]

# -- inflected languages: a query says another form of a document's words ----------------
INFLECTED_DOCS: list[tuple[str, str]] = [
    ("fr-cancel", "La commande du client a été annulée hier soir."),
    ("fr-delivery", "La livraison des colis est prévue pour lundi prochain."),
    ("fr-invoice", "Les factures de mars ont été envoyées au service comptable."),
    ("fr-password", "Le mot de passe de l'utilisateur a été réinitialisé."),
    ("de-termination", "Die Kündigungen wurden gestern vom Kundendienst bearbeitet."),
    ("de-invoice", "Die Rechnung für Februar wurde noch nicht bezahlt."),
    ("de-deploy", "Das Deployment auf den Produktionsservern ist fehlgeschlagen."),
    ("de-meeting", "Die Besprechungen mit den Lieferanten finden donnerstags statt."),
    ("es-booking", "Las reservas fueron canceladas ayer por el cliente."),
    ("es-payment", "Los pagos pendientes se procesarán el viernes."),
    ("es-tests", "Todas las pruebas automáticas pasaron sin errores."),
    ("it-order", "Gli ordini spediti oggi arriveranno domani a Milano."),
    ("it-refund", "Il cliente ha chiesto un rimborso per il prodotto difettoso."),
    ("pt-account", "As contas bloqueadas foram desbloqueadas pelo administrador."),
    ("ru-order", "Заказ был отменён вчера вечером."),
    ("ru-server", "Серверы базы данных перезапущены после обновления."),
    ("ru-payment", "Платежи клиентов обработаны без ошибок."),
    ("nl-invoice", "De facturen zijn gisteren verstuurd naar de klanten."),
    ("sv-meeting", "Mötena med leverantörerna flyttades till tisdag."),
    ("en-cancel", "The customer cancelled the order yesterday."),
    ("en-invoice", "Invoices for March were sent to accounting."),
]

INFLECTED_QUERIES: list[tuple[str, dict[str, int]]] = [
    ("commandes annulées", {"fr-cancel": 2}),
    ("facture", {"fr-invoice": 2}),
    ("livraisons", {"fr-delivery": 2}),
    ("mots de passe réinitialisés", {"fr-password": 2}),
    ("Kündigung", {"de-termination": 2}),
    ("Rechnungen bezahlen", {"de-invoice": 2}),
    ("Besprechung Lieferant", {"de-meeting": 2}),
    ("fehlgeschlagene Deployments", {"de-deploy": 2}),
    ("reserva cancelada", {"es-booking": 2}),
    ("pago pendiente", {"es-payment": 2}),
    ("prueba automática", {"es-tests": 2}),
    ("ordine spedito", {"it-order": 2}),
    ("rimborsi", {"it-refund": 2}),
    ("conta bloqueada", {"pt-account": 2}),
    ("отменить заказ", {"ru-order": 2}),
    ("сервер базы данных", {"ru-server": 2}),
    ("платёж", {"ru-payment": 2}),
    ("factuur", {"nl-invoice": 2}),
    ("möte leverantör", {"sv-meeting": 2}),
    ("cancel order", {"en-cancel": 2, "es-booking": 1, "fr-cancel": 1}),
    ("invoices", {"en-invoice": 2}),
]

# -- code identifiers and logs -------------------------------------------------------------
CODE_DOCS: list[tuple[str, str]] = [
    ("pytest-fail", "FAILED tests/test_api.py::test_create_user - AssertionError: 400 != 201"),
    ("decoy-story", "user story: create a new landing page for returning users"),
    ("py-def", "def delete_user(user_id: int) -> None:\n    session.delete(User.get(user_id))"),
    (
        "none-attr",
        "AttributeError: 'NoneType' object has no attribute 'getUserProfile' in profile/views.py",
    ),
    ("rank-pool", "tuning memory.search.RANK_POOL = 1000 made long questions slower"),
    ("e501", "src/memory/textindex.py:40:101: E501 line too long (112 > 100 characters)"),
    ("pydantic-bump", "Bumped pydantic from 2.14.3 to 2.14.4 (fixes a validator regression)"),
    ("cpp-vector", "std::vector<int>::push_back reallocates when size() == capacity()"),
    ("http-server", "HTTPServer listening on 0.0.0.0:8000, press Ctrl+C to stop"),
    (
        "ts-parse",
        "TypeError: cannot read properties of undefined in parseJsonResponse (api/client.ts:88)",
    ),
    ("npm-eresolve", "npm ERR! code ERESOLVE could not resolve dependency: peer react-dom@18.3.1"),
    ("kubectl", "kubectl rollout restart deployment/web-frontend -n production"),
    ("gin-index", "CREATE INDEX search_tokens_gin ON memory_searchdocument USING gin (tokens)"),
    ("kafka", "org.apache.kafka.clients.consumer.KafkaConsumer: poll timeout after 30000 ms"),
    (
        "go-panic",
        "panic: runtime error: index out of range [3] with length 3\ngoroutine 1 [running]:\nmain.parseArgs()",
    ),
    (
        "rust-borrow",
        "error[E0502]: cannot borrow `self.items` as mutable because it is also borrowed as immutable",
    ),
    ("env-var", "DATABASE_URL is not set; falling back to sqlite:///local.db"),
    ("git-merge", "CONFLICT (content): Merge conflict in memory/search/query.py"),
    (
        "java-npe",
        "java.lang.NullPointerException at com.shop.cart.CartService.applyCoupon(CartService.java:57)",
    ),
    ("decoy-profile", "The user profile page shows the avatar and the display name."),
]

CODE_QUERIES: list[tuple[str, dict[str, int]]] = [
    ("create_user", {"pytest-fail": 2}),
    ("create user", {"pytest-fail": 2, "decoy-story": 1}),
    ("test_create_user", {"pytest-fail": 2}),
    ("delete_user", {"py-def": 2}),
    ("get user profile", {"none-attr": 2, "decoy-profile": 1}),
    ("getUserProfile", {"none-attr": 2}),
    ("RANK_POOL", {"rank-pool": 2}),
    ("rank pool", {"rank-pool": 2}),
    ("textindex.py", {"e501": 2}),
    ("textindex", {"e501": 2}),
    ("pydantic 2.14.4", {"pydantic-bump": 2}),
    ("push_back", {"cpp-vector": 2}),
    ("std::vector", {"cpp-vector": 2}),
    ("http server", {"http-server": 2}),
    ("parse json response", {"ts-parse": 2}),
    ("client.ts", {"ts-parse": 2}),
    ("ERESOLVE", {"npm-eresolve": 2}),
    ("web-frontend deployment", {"kubectl": 2}),
    ("search_tokens_gin", {"gin-index": 2}),
    ("KafkaConsumer", {"kafka": 2}),
    ("kafka consumer poll timeout", {"kafka": 2}),
    ("parseArgs", {"go-panic": 2}),
    ("E0502", {"rust-borrow": 2}),
    ("DATABASE_URL", {"env-var": 2}),
    ("memory/search/query.py", {"git-merge": 2}),
    ("CartService.applyCoupon", {"java-npe": 2}),
    ("apply coupon", {"java-npe": 2}),
]
