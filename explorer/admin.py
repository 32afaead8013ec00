"""The admin's branding: people reach it from the explorer, so it says Morphz, not Django."""

from django.contrib import admin

admin.site.site_header = "Morphz administration"
admin.site.site_title = "Morphz"
admin.site.index_title = "Contexts, tokens and history"
admin.site.site_url = "/"  # "View site" opens the explorer
