"""Flask-Security-Too's quickstart ("Basic Flask-SQLAlchemy Application", with its fsqla_v3 models) plus
`SECURITY_WEBAUTHN = True` and the WebAuthn model the feature needs: the library's own views, templates and
scripts, untouched, with its default WebAuthn settings (a key may be a first factor: /wan-register offers the
usage, /wan-signin signs in with it). The database is the file $FLASK_SECURITY_DB, made with one user, $FS_USER
with the password $FS_PASSWORD. Run by test_security_keys.py with `flask --app flask_security_app run`.
"""
import os

from flask import Flask, render_template_string
from flask_security import Security, SQLAlchemyUserDatastore, auth_required, hash_password
from flask_security.models import fsqla_v3 as fsqla
from flask_sqlalchemy import SQLAlchemy

app = Flask(__name__)
app.config["SECRET_KEY"] = os.urandom(32).hex()
app.config["SECURITY_PASSWORD_SALT"] = os.urandom(16).hex()
app.config["SQLALCHEMY_DATABASE_URI"] = "sqlite:///" + os.environ["FLASK_SECURITY_DB"]
app.config["SECURITY_WEBAUTHN"] = True

db = SQLAlchemy(app)
fsqla.FsModels.set_db_info(db)


class Role(db.Model, fsqla.FsRoleMixin):
    pass


class User(db.Model, fsqla.FsUserMixin):
    pass


class WebAuthn(db.Model, fsqla.FsWebAuthnMixin):
    pass


app.security = Security(app, SQLAlchemyUserDatastore(db, User, Role, WebAuthn))


@app.route("/")
@auth_required()
def home():
    return render_template_string("<p id='hello'>Hello {{ current_user.email }}</p>")


with app.app_context():
    db.create_all()
    if not app.security.datastore.find_user(email=os.environ["FS_USER"]):
        app.security.datastore.create_user(email=os.environ["FS_USER"], password=hash_password(os.environ["FS_PASSWORD"]))
    db.session.commit()
